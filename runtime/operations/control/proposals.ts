import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { ServiceError, accessDenied, conflict, validationFailed } from '../../errors/service-error.js';
import { grantCovered, heldGrants } from '../../pipeline/grants.js';
import { readHead } from '../../control/schema-change.js';
import { changesBetween } from '../../control/schema-rollback.js';
import { recordApproval } from '../../proposals/approvals.js';
import { COLUMNS, analyse, proposalRecord, requireProposal, unmetGates, type ProposalRow } from '../../proposals/proposal-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { bodyObject, checkBranchName, refuseUnknown } from './branches.js';

const S = PLATFORM_SCHEMA;

const proposalOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

const optionalText = (v: unknown, field: string, max: number): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > max) throw validationFailed('Proposal.InvalidBody', `'${field}' must be a string of at most ${max} characters`, field);
  return v;
};

const create = proposalOp('ControlPlane.Proposal.Create', async (ctx) => {
  const b = bodyObject(ctx.inv.body, 'Proposal');
  refuseUnknown(b, ['title', 'base', 'head', 'description'], 'Proposal');
  const title = optionalText(b.title, 'title', 500);
  if (title === null || title.trim() === '') throw validationFailed('Proposal.InvalidBody', "'title' is required", 'title');
  const base = checkBranchName(b.base, 'base');
  const head = checkBranchName(b.head, 'head');
  if (base === head) throw validationFailed('Proposal.SameBranch', "'head' must differ from 'base'", 'head');
  const description = optionalText(b.description, 'description', 10_000);
  const projectId = ctx.scope!.project.id;
  await readHead(ctx.services.db, projectId, base, false);
  await readHead(ctx.services.db, projectId, head, false);
  const res = await ctx.services.db.query<ProposalRow>(
    `INSERT INTO ${S}.proposals (id, project_id, title, base, head, description) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [randomUUID(), projectId, title, base, head, description],
  );
  return control(ctx, 'Proposal', 'created', proposalRecord(res.rows[0]!), 201);
});

const list = proposalOp('ControlPlane.Proposal.List', async (ctx) => {
  const res = await ctx.services.db.query<ProposalRow>(`SELECT ${COLUMNS} FROM ${S}.proposals WHERE project_id = $1 ORDER BY created_at DESC LIMIT 500`, [ctx.scope!.project.id]);
  return control(ctx, 'Proposal', 'listed', res.rows.map(proposalRecord));
});

async function fullRecord(ctx: OperationContext, p: ProposalRow): Promise<Record<string, unknown>> {
  const a = await analyse(ctx.services.db, ctx.scope!.project.id, p);
  return {
    ...proposalRecord(p), diff: p.state === 'merged' ? [] : a.diff, validation: a.validation, approvals: a.approvals,
    baseVersion: a.baseVersion, headVersion: a.headVersion,
  };
}

const read = proposalOp('ControlPlane.Proposal.Read', async (ctx) => {
  const p = await requireProposal(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.id ?? '');
  return control(ctx, 'Proposal', 'read', await fullRecord(ctx, p));
});

/** Approvers: the admin, or a holder of `branch:<base>:approve` (known only once the proposal is read, so checked here). */
async function refuseNonApprover(ctx: OperationContext, base: string): Promise<void> {
  const held = await heldGrants(ctx);
  const grant = `branch:${base}:approve`;
  if (held !== 'all' && !grantCovered(held.grants, grant)) {
    throw accessDenied('Proposal.ApproverGrantMissing', `approving needs ${grant}`, { missingGrants: [grant] });
  }
}

/**
 * The head version the approver says it reviewed (`headPublicationVersion` in the body, optional):
 * when given and head has moved since, the approval is refused rather than recorded for a head
 * the approver never saw.
 */
function reviewedVersion(body: unknown): number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const v = (body as Record<string, unknown>).headPublicationVersion;
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw validationFailed('Proposal.InvalidBody', "'headPublicationVersion' must be a non-negative integer", 'headPublicationVersion');
  }
  return v;
}

/** Records an approval of head's CURRENT publication against base's: a later change to either voids it (runtime/proposals/approvals.ts). */
const approve: OperationSpec = { ...proposalOp('ControlPlane.Proposal.Approve', async (ctx) => {
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const p = await requireProposal(db, projectId, ctx.inv.params.id ?? '');
  await refuseNonApprover(ctx, p.base);
  const reviewed = reviewedVersion(ctx.inv.body);
  const head = await readHead(db, projectId, p.head, false);
  const base = await readHead(db, projectId, p.base, false);
  if (reviewed !== null && reviewed !== head.version) {
    throw conflict('Proposal.HeadMoved', `head '${p.head}' is at publication ${head.version}, not ${reviewed}: review it again`, 'headPublicationVersion');
  }
  await recordApproval(db, p.id, ctx.actor.label, ctx.actor.subjectId, { headVersion: head.version, baseVersion: base.version });
  return control(ctx, 'Proposal', 'approved', await fullRecord(ctx, p));
}), authn: 'user' };

/**
 * Merge: gates and diff are computed afresh on base's current head (a base
 * that moved since the proposal was read is re-validated, never merged on a
 * stale plan); the changes run through the Project actor as ONE migration of
 * kind `merge`, whose settle step refuses a head that moved meanwhile.
 */
const merge = proposalOp('ControlPlane.Proposal.Merge', async (ctx) => {
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const p = await requireProposal(db, projectId, ctx.inv.params.id ?? '');
  if (p.state === 'merged') throw conflict('Proposal.AlreadyMerged', 'the proposal is already merged');
  const a = await analyse(db, projectId, p);
  const unmet = unmetGates(a);
  if (unmet.length > 0) throw new ServiceError('CONFLICT', 'Proposal.GatesNotMet', `merge gates not met: ${unmet.join(', ')}`, { unmetGates: unmet });
  if (a.diff.length === 0) throw conflict('Proposal.NothingToMerge', "head's schema equals base's: nothing to merge");
  // The head publication the approvals were counted on, never head re-read: a push to head
  // during the merge cannot slip in (publications are immutable; base moving is refused below).
  const changes = changesBetween(a.base.model, a.head.model, a.base.schema);
  const res = await ctx.services.control.schemaCommand(projectId, {
    kind: 'migrate',
    migration: {
      branch: p.base, kind: 'merge', changes, actor: ctx.actor.label, correlationId: ctx.inv.correlationId,
      changeFields: { proposalId: p.id, head: p.head, headPublicationVersion: a.headVersion }, expectedFromVersion: a.baseVersion,
    },
  });
  if (res.kind !== 'migrated') throw new Error('unexpected schema command result');
  const version = res.result.publication.version;
  const upd = await db.query(`UPDATE ${S}.proposals SET state = 'merged', merged_version = $2 WHERE id = $1 AND state = 'open'`, [p.id, version]);
  if ((upd.rowCount ?? 0) === 0) throw conflict('Proposal.AlreadyMerged', 'the proposal is already merged');
  return control(ctx, 'Proposal', 'merged', { id: p.id, state: 'merged', publicationVersion: version });
});

/** `/api/proposals…` (CONTRACT "Proposals"). */
export const PROPOSAL_SPECS = { create, list, read, approve, merge };
