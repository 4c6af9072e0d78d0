import { notFound, validationFailed } from '../../errors/service-error.js';
import { UUID_TEXT } from '../../control/rows.js';
import { listSandboxes, readSandbox } from '../../branches/sandbox-store.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { bodyObject, checkBranchName, refuseUnknown, runBranch } from './branches.js';

const sandboxOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

const DEFAULT_TTL_S = 86_400;
/** A year: a sandbox is ephemeral by definition. */
const MAX_TTL_S = 31_536_000;

function sandboxId(ctx: OperationContext): string {
  const id = ctx.inv.params.id ?? '';
  // A path id that is not a UUID names no sandbox the platform made.
  if (!UUID_TEXT.test(id)) throw notFound('Sandbox.NotFound', 'sandbox not found');
  return id.toLowerCase();
}

/** `/api/sandboxes` (CONTRACT "Sandboxes"): ephemeral branches with a TTL, swept by the StagingTtlSweeper. */
export const SANDBOX_SPECS = {
  create: sandboxOp('ControlPlane.Sandbox.Create', async (ctx) => {
    const b = bodyObject(ctx.inv.body, 'Sandbox');
    refuseUnknown(b, ['branch', 'seedFrom', 'ttlSeconds'], 'Sandbox');
    const sourceBranch = checkBranchName(b.branch, 'branch');
    const seedFrom = b.seedFrom === undefined || b.seedFrom === null ? null : checkBranchName(b.seedFrom, 'seedFrom');
    const ttl = b.ttlSeconds ?? DEFAULT_TTL_S;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_S) {
      throw validationFailed('Sandbox.InvalidTtl', `'ttlSeconds' must be an integer from 1 to ${MAX_TTL_S}`, 'ttlSeconds');
    }
    const res = await runBranch(ctx, { kind: 'createSandbox', sourceBranch, seedFrom, ttlSeconds: ttl, correlationId: ctx.inv.correlationId });
    if (res.kind !== 'sandbox') throw new Error(`unexpected sandbox command result ${res.kind}`);
    return control(ctx, 'Sandbox', 'created', res.sandbox, 201);
  }),
  list: sandboxOp('ControlPlane.Sandbox.List', async (ctx) => control(ctx, 'Sandbox', 'listed', await listSandboxes(ctx.services.db, ctx.scope!.project.id))),
  read: sandboxOp('ControlPlane.Sandbox.Read', async (ctx) => {
    const sb = await readSandbox(ctx.services.db, ctx.scope!.project.id, sandboxId(ctx));
    if (sb === null) throw notFound('Sandbox.NotFound', 'sandbox not found');
    return control(ctx, 'Sandbox', 'read', sb);
  }),
  delete: sandboxOp('ControlPlane.Sandbox.Delete', async (ctx) => {
    await runBranch(ctx, { kind: 'deleteSandbox', sandboxId: sandboxId(ctx) });
    return noContent;
  }),
};
