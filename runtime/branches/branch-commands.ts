import { randomBytes, randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { copyBranch, dropBranch } from './branch-copy.js';
import { findBranch, requireBranch, type BranchRecord, type BranchRef } from './branch-store.js';
import { readSandbox, sandboxRecord, type SandboxRecord, type SandboxRow } from './sandbox-store.js';

const S = PLATFORM_SCHEMA;

/**
 * Writes to a project's branches, carried out by the Project actor (the single
 * writer of branch heads and publications). The operations validated the body.
 */
export type BranchCommand =
  | { kind: 'create'; name: string; base: string; correlationId: string }
  | { kind: 'delete'; ref: BranchRef }
  | { kind: 'protect'; ref: BranchRef; requireProposal: boolean; requiredApprovals: number }
  | { kind: 'createSandbox'; sourceBranch: string; seedFrom: string | null; ttlSeconds: number; correlationId: string }
  | { kind: 'deleteSandbox'; sandboxId: string };

export type BranchCommandResult =
  | { kind: 'branch'; branch: BranchRecord; schemaChanged: boolean }
  | { kind: 'sandbox'; sandbox: SandboxRecord }
  | { kind: 'deleted'; branch: string }
  | { kind: 'none' };

/** A copy reads every table of the base once: one snapshot, so rows that reference each other arrive together. */
const snapshotTx = async (tx: SqlExecutor): Promise<void> => {
  await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
};

async function refuseTaken(tx: SqlExecutor, projectId: string, name: string): Promise<void> {
  if ((await findBranch(tx, projectId, { name })) !== null) throw conflict('Branch.Exists', `branch '${name}' already exists`, 'name');
}

const sandboxName = (): string => `sandbox-${randomBytes(6).toString('hex')}`;

export async function runBranchCommand(db: SqlClient, projectId: string, cmd: BranchCommand): Promise<BranchCommandResult> {
  switch (cmd.kind) {
    case 'create': {
      const branch = await db.transaction(async (tx) => {
        await snapshotTx(tx);
        await requireBranch(tx, projectId, { name: cmd.base }, true);
        await refuseTaken(tx, projectId, cmd.name);
        await copyBranch(tx, { projectId, name: cmd.name, base: cmd.base, schemaFrom: cmd.base, rowsFrom: cmd.base, correlationId: cmd.correlationId });
        return (await requireBranch(tx, projectId, { name: cmd.name })).record;
      });
      return { kind: 'branch', branch, schemaChanged: true };
    }
    case 'delete': {
      const name = await db.transaction(async (tx) => {
        const b = await requireBranch(tx, projectId, cmd.ref, true);
        if (b.record.name === 'main') throw conflict('Branch.Protected', 'branch main cannot be deleted');
        await dropBranch(tx, projectId, b.record.name, b.schema);
        return b.record.name;
      });
      return { kind: 'deleted', branch: name };
    }
    case 'protect': {
      const branch = await db.transaction(async (tx) => {
        const b = await requireBranch(tx, projectId, cmd.ref, true);
        await tx.query(`UPDATE ${S}.branches SET require_proposal = $3, required_approvals = $4 WHERE project_id = $1 AND name = $2`, [projectId, b.record.name, cmd.requireProposal, cmd.requiredApprovals]);
        return (await requireBranch(tx, projectId, { name: b.record.name })).record;
      });
      return { kind: 'branch', branch, schemaChanged: false };
    }
    case 'createSandbox': {
      const sandbox = await db.transaction(async (tx) => {
        await snapshotTx(tx);
        await requireBranch(tx, projectId, { name: cmd.sourceBranch }, true);
        if (cmd.seedFrom !== null) await requireBranch(tx, projectId, { name: cmd.seedFrom }, true);
        const name = sandboxName();
        await refuseTaken(tx, projectId, name);
        await copyBranch(tx, { projectId, name, base: cmd.sourceBranch, schemaFrom: cmd.sourceBranch, rowsFrom: cmd.seedFrom, correlationId: cmd.correlationId });
        const res = await tx.query<SandboxRow>(
          `INSERT INTO ${S}.sandboxes (id, project_id, branch, source_branch, seed_from, expires_at)
           VALUES ($1, $2, $3, $4, $5, now() + ($6::int * interval '1 second')) RETURNING id, branch, source_branch, seed_from, expires_at, created_at`,
          [randomUUID(), projectId, name, cmd.sourceBranch, cmd.seedFrom, cmd.ttlSeconds],
        );
        return sandboxRecord(res.rows[0]!);
      });
      return { kind: 'sandbox', sandbox };
    }
    case 'deleteSandbox': {
      const name = await db.transaction(async (tx) => {
        const sb = await readSandbox(tx, projectId, cmd.sandboxId);
        if (sb === null) throw notFound('Sandbox.NotFound', 'sandbox not found');
        const b = await findBranch(tx, projectId, { name: sb.branch }, true);
        if (b !== null) await dropBranch(tx, projectId, b.record.name, b.schema);
        return sb.branch;
      });
      return { kind: 'deleted', branch: name };
    }
  }
}
