import { notFound } from '../../errors/service-error.js';
import { UUID_TEXT } from '../../control/rows.js';
import { listSandboxes, readSandbox } from '../../branches/sandbox-store.js';
import { control, noContent } from '../envelopes.js';
import type { OperationContext } from '../types.js';
import { branchOp, runBranch } from './branches.js';
import { BRANCH_SCHEMAS as S } from './branch-schemas.js';

const DEFAULT_TTL_S = 86_400;

function sandboxId(ctx: OperationContext): string {
  const id = ctx.inv.params.id ?? '';
  // A path id that is not a UUID names no sandbox the platform made.
  if (!UUID_TEXT.test(id)) throw notFound('Sandbox.NotFound', 'sandbox not found');
  return id.toLowerCase();
}

const BY_ID = { id: { description: 'Sandbox id.', schema: { type: 'string', format: 'uuid' } } };
const SANDBOX_REASONS = { prefix: 'Sandbox', fields: { branch: 'Branch.InvalidName', seedFrom: 'Branch.InvalidName', ttlSeconds: 'Sandbox.InvalidTtl' } };

/** `/api/sandboxes` (CONTRACT "Sandboxes"): ephemeral branches with a TTL, swept by the StagingTtlSweeper. */
export const SANDBOX_SPECS = {
  create: branchOp('ControlPlane.Sandbox.Create', {
    summary: 'Create an ephemeral branch with a generated name, optionally seeded with a branch\'s rows',
    routes: [{ method: 'POST', path: 'sandboxes' }],
    body: S.ControlSandboxInput, reasons: SANDBOX_REASONS,
    output: { status: 201, body: S.ControlSandboxSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { branch: string; seedFrom?: string | null; ttlSeconds?: number };
    const res = await runBranch(ctx, {
      kind: 'createSandbox', sourceBranch: b.branch, seedFrom: b.seedFrom ?? null, ttlSeconds: b.ttlSeconds ?? DEFAULT_TTL_S, correlationId: ctx.inv.correlationId,
    });
    if (res.kind !== 'sandbox') throw new Error(`unexpected sandbox command result ${res.kind}`);
    return control(ctx, 'Sandbox', 'created', res.sandbox, 201);
  }),
  list: branchOp('ControlPlane.Sandbox.List', {
    summary: 'List live sandboxes', routes: [{ method: 'GET', path: 'sandboxes' }], output: { status: 200, body: S.ControlSandboxList },
  }, async (ctx) => control(ctx, 'Sandbox', 'listed', await listSandboxes(ctx.services.db, ctx.scope!.project.id))),
  read: branchOp('ControlPlane.Sandbox.Read', {
    summary: 'Read a live sandbox', routes: [{ method: 'GET', path: 'sandboxes/:id' }], params: BY_ID, output: { status: 200, body: S.ControlSandboxSingle },
  }, async (ctx) => {
    const sb = await readSandbox(ctx.services.db, ctx.scope!.project.id, sandboxId(ctx));
    if (sb === null) throw notFound('Sandbox.NotFound', 'sandbox not found');
    return control(ctx, 'Sandbox', 'read', sb);
  }),
  delete: branchOp('ControlPlane.Sandbox.Delete', {
    summary: 'Delete a sandbox and its branch', routes: [{ method: 'DELETE', path: 'sandboxes/:id' }], params: BY_ID, output: { status: 204 },
  }, async (ctx) => {
    await runBranch(ctx, { kind: 'deleteSandbox', sandboxId: sandboxId(ctx) });
    return noContent;
  }),
};
