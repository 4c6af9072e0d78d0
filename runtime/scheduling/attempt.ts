import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors/service-error.js';
import { InvocationTx } from '../authored/invocation-tx.js';
import { failureError, invokeHandler, loadHandlerCode } from '../authored/invoke.js';
import { admitAuthoredInvocation, type AuthoredAdmission } from '../authored/admission.js';
import { recordAuthoredInvocation } from '../authored/evidence.js';
import { findHandler } from '../authored/handler-plan.js';
import type { HandlerDef, InvokeOutcome } from '../authored/types.js';
import { hostTargetsOf } from '../operations/authored/spec.js';
import type { OperationContext, Scope } from '../operations/types.js';
import type { Services } from '../services.js';
import type { ClaimedAttempt } from './claim.js';
import { closeAttempt, settleRun, succeedRun, type Ending, type RunError } from './finish.js';
import { attemptContext, runScope, serviceActor } from './service-actor.js';
import type { SuccessBatch } from './success-batch.js';
import { TASK_HANDLER_SURFACES } from './types.js';

/** Why a worker stopped an attempt before it ended: a cancel request, its lease taken over (`lost`), or the node shutting down. */
export type StopReason = 'cancel' | 'lost' | 'shutdown';

/** Thrown inside the finishing savepoint when the attempt was no longer `running`: nothing of it may commit. */
class Fenced extends Error {}

const errorOf = (e: ServiceError): RunError => ({ code: e.code, reasonCode: e.reasonCode, message: e.message });

/** The run's handler as the run's publication pins it; refused like a missing operation when it is gone or is no task surface. */
function handlerOf(scope: Scope, name: string): HandlerDef {
  const h = findHandler(scope.publication.record.model, name);
  if (h === undefined || !(TASK_HANDLER_SURFACES as readonly string[]).includes(h.surface)) {
    throw new ServiceError('NOT_FOUND', 'Handler.NotFound', `the serving publication has no background handler '${name}'`);
  }
  return h;
}

/**
 * Loads what the nested `ctx.db` calls' stages read from the pool (governance, binding
 * stability, quotas) while no transaction of the attempt is open: on PGlite (one
 * connection) a read of the pool while it is open would wait for it.
 */
async function warm(services: Services, projectId: string): Promise<void> {
  await services.governance?.effective(projectId);
  await services.stability?.of(projectId);
  await services.quotas?.concurrency(projectId, 'authored.invocations');
}

/**
 * How long an attempt's transaction may stay open on PGlite (one connection: everything else
 * waits meanwhile; spec.ts's PGLITE_TX_HOLD_MS explains the bound). Longer than an operation's:
 * no caller waits on a background run, and a bundle's first invocation in a fresh sandbox
 * worker takes several hundred milliseconds after its first write; at the operations' 250 ms
 * such an attempt was stopped, its worker replaced, and every retry was cold again.
 */
export const PGLITE_ATTEMPT_HOLD_MS = 2_000;

/** Abort by the worker (`stop`) or, on PGlite, once the attempt's transaction was open PGLITE_ATTEMPT_HOLD_MS. */
function attemptSignal(services: Services, stop: AbortSignal): { signal: AbortSignal; onOpen: () => void; clear: () => void } {
  if (services.db.backend !== 'pglite') return { signal: stop, onOpen: () => {}, clear: () => {} };
  const hold = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  return {
    signal: AbortSignal.any([stop, hold.signal]),
    onOpen: () => { timer ??= setTimeout(() => hold.abort(), PGLITE_ATTEMPT_HOLD_MS); },
    clear: () => { if (timer !== null) clearTimeout(timer); },
  };
}

/** A stopped, failed or refused attempt: the attempt row and its run, in one transaction on the pool. */
async function endUnsuccessful(services: Services, a: ClaimedAttempt, state: 'failed' | 'timedOut' | 'cancelled', error: RunError, e: Ending): Promise<void> {
  const ended = await services.db.transaction(async (tx) => (await closeAttempt(tx, a.attemptId, state, error)) ? settleRun(tx, a.runId, error, e) : null);
  if (ended === 'failed' || ended === 'cancelled') services.outbox.kick();
}

/**
 * One attempt of a claimed run (CONTRACT "Scheduling", TaskAttempt): the
 * handler runs as the project's service profile with `ctx.run` (and
 * `ctx.event` / `ctx.webhook`), its `ctx.db` writes in one transaction that
 * also carries the attempt's and the run's success, fenced on the attempt
 * still being `running`; anything else rolls it back and the run is retried,
 * failed or cancelled (finish.ts). `stopReason` says why `stop` aborted.
 * A success whose handler wrote nothing (its transaction never opened) is
 * ended with others in one statement (`successes`, success-batch.ts), under
 * the same fence.
 * An unexpected failure (the database went away) leaves the attempt as it is:
 * its lease runs out and the dispatcher retries it.
 */
export async function runAttempt(services: Services, a: ClaimedAttempt, stop: AbortSignal, stopReason: () => StopReason | null, successes: SuccessBatch): Promise<void> {
  const pool = services.authored?.pool;
  const correlationId = randomUUID();
  const ending: Ending = { correlationId, publicationVersion: null };
  let ctx: OperationContext;
  let handler: HandlerDef;
  let code: string;
  try {
    const scope = await runScope(services, a, correlationId);
    if (scope === null) throw new ServiceError('NOT_FOUND', 'Scope.ProjectNotFound', 'the run\'s project no longer exists');
    if (pool === undefined) throw new ServiceError('UNAVAILABLE', 'Handler.RuntimeUnavailable', 'this node runs no authored code');
    ending.publicationVersion = scope.publication.version;
    handler = handlerOf(scope, a.handler);
    ctx = attemptContext(services, scope, serviceActor(handler, scope.project.id), correlationId);
    code = await loadHandlerCode(ctx, handler);
    await warm(services, scope.project.id);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    return endUnsuccessful(services, a, 'failed', errorOf(err), ending);
  }
  let admission: AuthoredAdmission;
  try {
    admission = await admitAuthoredInvocation(ctx);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    return endUnsuccessful(services, a, 'failed', errorOf(err), ending);
  }
  const bound = attemptSignal(services, stop);
  const tx = new InvocationTx(services.db, bound.onOpen);
  const limits = { ...handler.limits, wallMs: Math.min(handler.limits.wallMs, a.timeoutSeconds * 1000) };
  const extra: Record<string, unknown> = {
    run: { id: a.runId, cause: a.cause, scheduledFor: a.scheduledFor, attempt: a.number },
    ...(a.context?.event === undefined ? {} : { event: a.context.event }),
    ...(a.context?.webhook === undefined ? {} : { webhook: a.context.webhook }),
  };
  let outcome: InvokeOutcome;
  try {
    outcome = await invokeHandler({ ctx, pool: pool!, handler: { ...handler, limits }, code, input: a.input, tx, targets: hostTargetsOf(ctx, handler), signal: bound.signal, extra });
  } catch (err) {
    bound.clear();
    admission.release();
    await tx.rollback();
    if (!(err instanceof ServiceError)) throw err;
    return endUnsuccessful(services, a, 'failed', errorOf(err), ending);
  }
  bound.clear();
  admission.settle(outcome.usage);
  recordAuthoredInvocation(ctx, handler, outcome);
  const stopped = stopReason();
  if (stopped !== null || !outcome.ok) {
    await tx.rollback();
    if (stopped === 'lost' || stopped === 'shutdown') return; // the dispatcher settles it (lost now, or once the lease ran out)
    if (stopped === 'cancel') return endUnsuccessful(services, a, 'cancelled', { code: 'CONFLICT', reasonCode: 'TaskRun.Cancelled', message: 'the run was cancelled' }, ending);
    const failure = (outcome as Extract<InvokeOutcome, { ok: false }>).failure;
    return endUnsuccessful(services, a, failure.kind === 'wallClockLimit' ? 'timedOut' : 'failed', errorOf(failureError(failure)), ending);
  }
  const output = outcome.ok ? (outcome.value ?? null) : null;
  if (!tx.open) {
    // Fenced out (false): marked lost meanwhile, its retry is the dispatcher's. The batch kicks the outbox.
    await successes.end({ attemptId: a.attemptId, runId: a.runId, output, correlationId, publicationVersion: ending.publicationVersion });
    return;
  }
  try {
    await tx.transaction(async (t) => {
      if (!(await closeAttempt(t, a.attemptId, 'succeeded', null))) throw new Fenced();
      await succeedRun(t, a.runId, output, ending);
    });
    await tx.commit();
  } catch (err) {
    await tx.rollback();
    if (err instanceof Fenced) return; // marked lost meanwhile: its retry is the dispatcher's
    if (!(err instanceof ServiceError)) throw err;
    return endUnsuccessful(services, a, 'failed', errorOf(err), ending);
  }
  services.outbox.kick();
}
