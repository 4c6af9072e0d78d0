import { httpStatusOf } from './errors/envelope.js';
import { maskError } from './errors/mask.js';
import { storageUnavailable } from './entities/sql-error-map.js';
import { isConnectionError } from '../storage/index.js';
import type { ServiceError } from './errors/service-error.js';
import type { Actor, Invocation, OperationContext, Result, Scope } from './operations/types.js';
import { checkGrants } from './pipeline/grants.js';
import { evaluateGovernance } from './pipeline/governance.js';
import { evaluateRowPolicy } from './pipeline/row-policy.js';
import { recordEvidence } from './pipeline/evidence.js';
import { resolveEntityRoute } from './pipeline/entity-route.js';
import { refuseUnstorableInput } from './pipeline/storable-input.js';
import { bindingStability, withDeprecation } from './pipeline/binding-stability.js';
import type { Services } from './services.js';
import { meterWithoutAuditRow, usageOf } from './usage/meter.js';
import type { QuotaHold } from './quota/ledger.js';
import { enforceAnswer, validateBody } from './operations/contract/index.js';

/**
 * The operation's executor, after its declared body schema (contract/) is
 * checked: a 422 there is the operation's own answer, as it was when each
 * handler checked its body, so it is recorded at stage 6 like one.
 */
function execute(ctx: OperationContext): Promise<Result> {
  const { operation, body } = ctx.inv;
  if (operation.contract !== undefined) validateBody(operation.contract, operation.id, body);
  return operation.execute(ctx);
}

/** Runs the operation under its quota hold: what it consumed is counted, a failure releases the units it held. */
async function executeHeld(ctx: OperationContext, hold: QuotaHold): Promise<Result> {
  let result: Result;
  try {
    result = await execute(ctx);
  } catch (err) {
    hold.release();
    throw err;
  }
  if (result.status < 400) hold.settle(result);
  else hold.release();
  return result;
}

/** `publicationVersion`: the publication that served a project-scoped request, once the scope stage resolved it (CONTRACT "Deployments"). */
export type Outcome = ({ ok: true; result: Result } | { ok: false; error: ServiceError }) & { publicationVersion?: number };

/** A fresh context: nothing decided yet. */
export const newContext = (inv: Invocation, services: Services, actor: Actor, scope: Scope | null): OperationContext => ({
  inv, services, actor, scope, operationId: inv.operation.id, entity: null, entityOperation: null, rowPolicy: null,
  trace: { stage: 1, evaluatedFilter: null, fieldMasks: [] },
  envelope: null,
});

/**
 * Stages 3 to 6 once stage 2 resolved the scope (binding stability first):
 * governance, grants, row policy, quotas, the operation, its evidence.
 * `ctx.inv` is read afresh: stage 2 may have replaced it.
 */
export async function authorizeAndExecute(ctx: OperationContext): Promise<Outcome> {
  const { services } = ctx;
  // Exposure binding stability (docs/versioning-and-records.md): Retired fails closed; Deprecated adds headers.
  const stability = bindingStability(ctx);
  const deprecation = stability instanceof Promise ? await stability : stability;
  ctx.trace.stage = 3;
  const governed = evaluateGovernance(ctx); // synchronous unless the envelope cache missed
  if (governed !== undefined) await governed;
  ctx.trace.stage = 4;
  const policy = await checkGrants(ctx);
  ctx.trace.stage = 5;
  if (policy !== null) evaluateRowPolicy(ctx, policy);
  // Quotas (runtime/quota/): a hard or reservation quota refuses here, before any work; null when none applies.
  const admitted = services.quotas?.admit(ctx);
  const hold = admitted instanceof Promise ? await admitted : admitted ?? null;
  ctx.trace.stage = 6;
  const executed = hold === null ? await execute(ctx) : await executeHeld(ctx, hold);
  const inv = ctx.inv;
  // Tests run with CHECK_ANSWERS: an answer its contract does not describe fails the test that met it.
  const { contract } = inv.operation;
  if (services.limits.checkAnswers === true && contract !== undefined) {
    enforceAnswer(inv.operation.id, contract, executed.status, executed.body, executed.stream !== undefined, services.limits.checkAnswersLog);
  }
  const result = deprecation === null ? executed : withDeprecation(executed, deprecation);
  // Usage: only what was executed consumes (runtime/usage/meter.ts), and the audit row carries it.
  const usage = usageOf(ctx, result);
  if (inv.operation.evidence !== 'failures') recordEvidence(ctx, result.status, null, usage); // 6
  else if (usage !== null) meterWithoutAuditRow(ctx, usage);
  return ctx.scope === null ? { ok: true, result } : { ok: true, result, publicationVersion: ctx.scope.publication.version };
}

/** A stage or the operation failed: the declared error (anything else masked as INTERNAL), recorded at stage 6. */
export function failedOutcome(ctx: OperationContext, err: unknown): Outcome {
  // A storage connection lost in any stage (a cache load, a grant lookup) is retryable like one lost in the operation.
  const error = isConnectionError(err) ? storageUnavailable(err) : maskError(err, ctx.inv.correlationId, ctx.services.log);
  recordEvidence(ctx, httpStatusOf(error), error); // 6
  return ctx.scope === null ? { ok: false, error } : { ok: false, error, publicationVersion: ctx.scope.publication.version };
}

/**
 * A call made on behalf of a request that already passed stages 1 and 2 (an
 * authored handler's `ctx.db` and `ctx.platform` calls): it keeps that
 * request's actor and scope (the same publication, never re-resolved: a ramp
 * could pin another one) and runs every other stage — governance, grants, row
 * policy, masks, quotas, the operation and its audit row — as its own.
 * `scope` null: a platform operation of no project scope.
 */
export async function dispatchNested(inv: Invocation, services: Services, parent: { actor: Actor; scope: Scope | null }): Promise<Outcome> {
  const ctx = newContext(inv, services, parent.actor, null);
  try {
    refuseUnstorableInput(inv);
    ctx.trace.stage = 2;
    if (inv.operation.scope === 'project') {
      ctx.scope = parent.scope;
      if (inv.collection !== null && parent.scope !== null) resolveEntityRoute(ctx, parent.scope);
    }
    return await authorizeAndExecute(ctx);
  } catch (err) {
    return failedOutcome(ctx, err);
  }
}
