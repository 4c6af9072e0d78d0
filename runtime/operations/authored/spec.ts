import { accessDenied, notFound, ServiceError, validationFailed } from '../../errors/service-error.js';
import { authoredOperations, findAuthoredOperation, validatorsOf, type AuthoredOperation } from '../../authored/operations.js';
import { InvocationTx } from '../../authored/invocation-tx.js';
import { failureError, invokeHandler, loadHandlerCode } from '../../authored/invoke.js';
import type { HostTargets } from '../../authored/host-bridge.js';
import type { AuthoredPool, HandlerDef, InvokeUsage } from '../../authored/types.js';
import { admitAuthoredInvocation, type AuthoredAdmission } from '../../authored/admission.js';
import { recordAuthoredInvocation } from '../../authored/evidence.js';
import { authoredFetch } from '../../authored/egress.js';
import { authoredLogTargets } from '../../authored/log.js';
import { dispatchNested } from '../../dispatch-stages.js';
import { defineSchemas, firstError, type TagDecl } from '../contract/index.js';
import { controlEnvelope } from '../control/control-schemas.js';
import { control } from '../envelopes.js';
import { checkIdempotencyKey, ENTITY_SPECS, runClaimedIdempotent, runIdempotent } from '../entity/index.js';
import type { DeclaredSpec, OperationContext, Result, Scope } from '../types.js';

export { findAuthoredOperation, authoredOperations, type AuthoredOperation };

export const AUTHORED_OPERATIONS_TAG: TagDecl = {
  name: 'Operations',
  description: 'The project\'s authored operations (CONTRACT "Operations"): handlers declared with `operation` through `POST /api/Schema/handlers`. '
    + 'The publication\'s own OpenAPI document lists each one under `Operation.<name>` or `Entity.<Entity>.<name>` with its input and output schemas.',
};

const SCHEMAS = defineSchemas({
  ControlOperationResult: controlEnvelope('Operation', 'completed', { description: 'The handler\'s return value (checked against the operation\'s `output` when it declares one).' }),
});

/** The reason an input that does not match the operation's `input` schema answers. */
const INPUT_INVALID = 'Operation.InvalidInput';

/**
 * The host targets besides `ctx.db` and `ctx.platform`: `ctx.log.*` into the audit trail of
 * this correlation id (runtime/authored/log.ts, one set per invocation: it counts the lines),
 * and `ctx.fetch` through the project's egress allow-list (runtime/authored/egress.ts).
 */
export function hostTargetsOf(ctx: OperationContext, handler: HandlerDef): HostTargets {
  const projectId = ctx.scope!.project.id;
  return { fetch: (call) => authoredFetch(ctx.services, projectId, call), ...authoredLogTargets(ctx, handler) };
}

/**
 * Stage 2 for an authored operation: its name (`params.operation`) and, for an
 * instance operation, its entity's collection (`inv.collection`), looked up in
 * the pinned publication. Unknown → 404 `Operation.Unknown`.
 */
export function resolveAuthoredOperation(ctx: OperationContext, scope: Scope): void {
  ctx.scope = scope;
  const found = findAuthoredOperation(scope.publication, ctx.inv.collection, ctx.inv.params.operation ?? '');
  if (found === undefined) throw notFound('Operation.Unknown', 'no operation with this name');
  ctx.operationId = found.operationId;
  if (found.entity !== null) ctx.entity = scope.publication.entities.get(found.entity) ?? null;
}

/** The operation stage 2 found (it answered 404 if none). */
const operationOf = (ctx: OperationContext): AuthoredOperation =>
  findAuthoredOperation(ctx.scope!.publication, ctx.inv.collection, ctx.inv.params.operation ?? '')!;

/** Validates the body against the operation's `input` (422 VALIDATION_FAILED naming the field). */
function checkInput(ctx: OperationContext, found: AuthoredOperation): unknown {
  const input = ctx.inv.body === undefined ? null : ctx.inv.body;
  const validate = validatorsOf(ctx.scope!.publication, found).input;
  if (validate(input)) return input;
  const e = firstError(validate.errors ?? []);
  throw validationFailed(INPUT_INVALID, e.message, e.field === '' ? undefined : e.field);
}

/** An instance operation's row, read as the caller would read it (grants, row policy): unknown → 404 before the handler runs. */
async function requireRow(ctx: OperationContext, id: string): Promise<void> {
  const out = await dispatchNested({ ...ctx.inv, operation: ENTITY_SPECS.Read, relation: null, params: { id }, body: undefined, idempotencyKey: null, ifMatch: null, args: { fields: 'id' } }, ctx.services, ctx);
  if (!out.ok) throw out.error;
}

/**
 * One invocation: the handler runs in the pool; a CoreHandler's `ctx.db`
 * writes go through one transaction (`tx`), committed when it returns with an
 * answer that matches `output`, rolled back otherwise.
 */
async function run(ctx: OperationContext, found: AuthoredOperation, pool: AuthoredPool, code: string, input: unknown, tx: InvocationTx | undefined, admission: OnceAdmission, signal?: AbortSignal): Promise<Result> {
  const { handler } = found;
  const id = ctx.inv.params.id;
  const outcome = await invokeHandler({
    ctx, pool, handler, code, input, ...(id === undefined ? {} : { id }), ...(tx === undefined ? {} : { tx }), targets: hostTargetsOf(ctx, handler), ...(signal === undefined ? {} : { signal }),
  });
  // It ran, whatever ended it: its CPU counts, and it leaves its one audit row (CONTRACT "Evidence").
  admission.settle(outcome.usage);
  recordAuthoredInvocation(ctx, handler, outcome);
  const record = { handler: handler.name, surface: handler.surface, sha256: handler.sha256, bundleSha256: handler.bundleSha256, usage: outcome.usage };
  if (!outcome.ok) {
    ctx.authored = { ...record, outcome: outcome.failure.kind, failure: outcome.failure };
    throw failureError(outcome.failure);
  }
  const value = outcome.value === undefined ? null : outcome.value;
  const output = validatorsOf(ctx.scope!.publication, found).output;
  if (output !== null && !output(value)) {
    ctx.authored = { ...record, outcome: 'outputInvalid' };
    const e = firstError(output.errors ?? []);
    throw new ServiceError('BRIDGE_ERROR', 'Handler.OutputInvalid', `the handler's return value does not match the operation's output: ${e.message}`, e.field === '' ? {} : { field: e.field });
  }
  ctx.authored = { ...record, outcome: 'ok' };
  return control(ctx, 'Operation', 'completed', value);
}

/**
 * How long an invocation's transaction may stay open on PGlite. PGlite has one connection: while
 * a CoreHandler's transaction is open, every other request of every project waits for it. So
 * from its first write a handler has this long to return; then it is stopped (504
 * `Handler.WallClockLimit`) and rolled back. PostgreSQL holds one pooled connection instead
 * and needs no such bound.
 */
export const PGLITE_TX_HOLD_MS = 250;

/** The PGlite bound of one invocation: `start` arms it when the transaction opens, `signal` stops the invocation. */
function pgliteHold(ctx: OperationContext): { start: () => void; signal: AbortSignal; clear: () => void } | undefined {
  if (ctx.services.db.backend !== 'pglite') return undefined;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  return {
    signal: abort.signal,
    start: () => { timer ??= setTimeout(() => abort.abort(), PGLITE_TX_HOLD_MS); },
    clear: () => { if (timer !== null) clearTimeout(timer); },
  };
}

/** An admission settled or released once: whichever comes first wins, later calls do nothing. */
interface OnceAdmission { settle(usage: InvokeUsage): void; release(): void }
function onceAdmission(a: AuthoredAdmission): OnceAdmission {
  let done = false;
  return {
    settle: (usage) => { if (!done) { done = true; a.settle(usage); } },
    release: () => { if (!done) { done = true; a.release(); } },
  };
}

/**
 * `POST /api/operations/{operation}` and `POST /api/{collection}/{id}/{operation}`
 * (CONTRACT "Operations"): THE spec every protocol dispatches an authored
 * operation through. Its Invocation: `params.operation` the operation's name,
 * `params.id` the row id of an instance operation, `collection` the entity's
 * collection (plural) for an instance operation else null, `body` the input.
 * Stage 2 resolves the name against the pinned publication (resolve-scope.ts),
 * stage 4 requires `operation:<name>:invoke`.
 */
export const AUTHORED_OPERATION_SPEC: DeclaredSpec = {
  id: 'Operation.Invoke', authn: 'user', scope: 'project',
  grants: (ctx) => {
    const found = ctx.scope === null ? undefined : findAuthoredOperation(ctx.scope.publication, ctx.inv.collection, ctx.inv.params.operation ?? '');
    return found === undefined ? [] : [found.requiredGrant];
  },
  contract: {
    tag: AUTHORED_OPERATIONS_TAG,
    summary: 'Run a project operation (a handler declared with `operation` and no `entity`); an instance operation is `POST /{collection}/{id}/{operation}`',
    description: 'The body is the input, validated against the operation\'s `input` schema (422 `Operation.InvalidInput` naming the field). '
      + 'Needs `operation:<name>:invoke`. The handler\'s failures: threw → 502 BRIDGE_ERROR `Handler.Threw`, CPU or wall-clock limit → 504 `Handler.CpuLimit` / `Handler.WallClockLimit`, '
      + 'memory limit → 502 `Handler.MemoryLimit`, a return value that is not JSON → 502 `Handler.ResultInvalid`, one that does not match `output` → 502 `Handler.OutputInvalid`, '
      + '`ctx.error(…)` → that error. No sandbox pool on this node → 503.',
    routes: [{ method: 'POST', path: 'operations/:operation' }],
    params: { operation: { description: 'The operation\'s name.' } },
    sharedParams: ['IdempotencyKey'],
    output: { status: 200, body: SCHEMAS.ControlOperationResult },
    errors: [400, 401, 403, 404, 409, 422, 429, 502, 503, 504],
    metering: { unit: 'none', why: 'an invocation counts as `authored.invocations` (and its CPU as `authored.cpu_ms`); its `ctx.db` calls count as their own reads and writes' },
    stability: 'experimental',
  },
  execute: async (ctx) => {
    const found = operationOf(ctx);
    const { handler } = found;
    const pool = ctx.services.authored?.pool;
    if (pool === undefined) throw new ServiceError('UNAVAILABLE', 'Handler.RuntimeUnavailable', 'this node runs no authored code');
    if (handler.surface === 'ManagementHandler' && ctx.actor.kind !== 'admin') {
      throw accessDenied('Handler.AdminOnly', 'a management operation runs only for the platform admin');
    }
    const input = checkInput(ctx, found);
    const key = ctx.inv.idempotencyKey === null ? null : checkIdempotencyKey(ctx.inv.idempotencyKey);
    if (found.entity !== null) await requireRow(ctx, ctx.inv.params.id ?? '');
    // Everything that reads the pool happens before a transaction of the invocation opens (PGlite: one connection):
    // the bundle, and the project's quotas, which the nested calls' quota stage reads (grants, governance and
    // binding stability were loaded for this project by this request's own stages).
    const code = await loadHandlerCode(ctx, handler);
    await ctx.services.quotas?.concurrency(ctx.scope!.project.id, 'authored.invocations');
    // Quotas of authored code refuse here, before anything runs (429); a run that never starts (a replayed key) releases its claim.
    const admission = onceAdmission(await admitAuthoredInvocation(ctx));
    // CoreHandler: one transaction. An Idempotency-Key's claim shares a transaction with what it guards, as on create.
    // An EdgeHandler's ctx.db is read-only (host-bridge.ts), so its transaction holds only the claim; its reads go through it too.
    const hold = pgliteHold(ctx);
    const tx = handler.surface === 'CoreHandler' || (key !== null && handler.surface === 'EdgeHandler') ? new InvocationTx(ctx.services.db, hold?.start) : undefined;
    const once = (): Promise<Result> => run(ctx, found, pool, code, input, tx, admission, hold?.signal);
    let result: Result;
    try {
      // A ManagementHandler has no transaction of its own (its platform calls keep theirs): its key is claimed first.
      result = key === null ? await once() : tx === undefined ? await runClaimedIdempotent(ctx, key, once) : await runIdempotent(ctx, key, once, tx);
    } catch (err) {
      hold?.clear();
      admission.release();
      await tx?.rollback();
      throw err;
    }
    hold?.clear();
    admission.release();
    try {
      await tx?.commit();
    } catch (err) {
      if (ctx.authored !== undefined) ctx.authored = { ...ctx.authored, outcome: 'commitFailed' };
      throw err;
    }
    if (tx?.open === true) ctx.services.outbox.kick(); // its events are relayed once committed
    return result;
  },
};
