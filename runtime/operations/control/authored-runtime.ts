import { ServiceError } from '../../errors/service-error.js';
import { readAllowedHosts, readEgress, writeEgress } from '../../authored/egress-hosts.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { AUTHORED_RUNTIME_SCHEMAS as S } from './authored-runtime-schemas.js';

const TAG: TagDecl = { name: 'AuthoredRuntime', description: 'The runtime authored code runs in: its egress allow-list and its sandbox workers.' };
const UNMETERED = { unit: 'none', why: 'configures the runtime of the project\'s code, platform admin only; invocations of that code are what is metered' } as const;

type RuntimeContract = Omit<OperationContract, 'tag' | 'metering' | 'stability' | 'errors'> & Partial<Pick<OperationContract, 'errors'>>;

/** Project-scoped, platform admin only (CONTRACT "Authored code"), never metered. */
const runtimeOp = (id: string, contract: RuntimeContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: TAG, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: UNMETERED, stability: 'beta', ...contract },
});

const REASONS = { prefix: 'Egress', fields: { allowedHosts: 'Egress.InvalidHost' } };
const projectOf = (ctx: OperationContext): string => ctx.scope!.project.id;

/** `/api/AuthoredRuntime/…` (CONTRACT "Sandbox and limits"; docs/authored-code.md "Egress"). */
export const AUTHORED_RUNTIME_SPECS: Record<string, DeclaredSpec> = {
  readEgress: runtimeOp('ControlPlane.AuthoredRuntime.ReadEgress', {
    summary: 'The hosts `ctx.fetch` may reach (empty until set: no egress)', routes: [{ method: 'GET', path: 'AuthoredRuntime/egress' }],
    output: { status: 200, body: S.ControlAuthoredEgressSingle },
  }, async (ctx) => control(ctx, 'AuthoredRuntime', 'read', await readEgress(ctx.services.db, projectOf(ctx)))),
  writeEgress: runtimeOp('ControlPlane.AuthoredRuntime.WriteEgress', {
    summary: 'Replace the hosts `ctx.fetch` may reach (host names, matched on any port)', routes: [{ method: 'PUT', path: 'AuthoredRuntime/egress' }],
    body: S.ControlAuthoredEgressInput, reasons: REASONS, output: { status: 200, body: S.ControlAuthoredEgressSingle },
  }, async (ctx) => control(ctx, 'AuthoredRuntime', 'updated', await writeEgress(ctx.services.db, projectOf(ctx), readAllowedHosts(ctx.inv.body)))),
  resetWorkers: runtimeOp('ControlPlane.AuthoredRuntime.ResetWorkers', {
    summary: 'Replace the sandbox pool\'s workers (in-flight invocations finish on the old ones); 503 when this node runs no pool',
    routes: [{ method: 'POST', path: 'AuthoredRuntime/workers/reset' }],
    output: { status: 202, body: S.ControlAuthoredWorkersResetSingle }, errors: [401, 403, 404, 503],
  }, async (ctx) => {
    const pool = ctx.services.authored?.pool;
    if (pool === undefined) throw new ServiceError('UNAVAILABLE', 'AuthoredRuntime.Unavailable', 'this node runs no sandbox pool for authored code');
    const log = ctx.services.log;
    const correlationId = ctx.inv.correlationId;
    // Accepted, not awaited: the old workers drain their in-flight invocations (up to their wall-clock limit) on their own time.
    pool.reset().catch((err: unknown) => log.error('authored worker reset failed', { correlationId, error: err instanceof Error ? err.message : String(err) }));
    return control(ctx, 'AuthoredRuntime', 'accepted', { reset: true }, 202);
  }),
};
