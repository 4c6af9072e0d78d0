import { httpStatusOf } from './errors/envelope.js';
import { maskError } from './errors/mask.js';
import { storageUnavailable } from './entities/sql-error-map.js';
import { isConnectionError } from '../storage/index.js';
import type { ServiceError } from './errors/service-error.js';
import { ANONYMOUS, type Invocation, type OperationContext, type Result } from './operations/types.js';
import { authenticate } from './pipeline/authenticate.js';
import { checkGrants } from './pipeline/grants.js';
import { evaluateGovernance } from './pipeline/governance.js';
import { evaluateRowPolicy } from './pipeline/row-policy.js';
import { recordEvidence } from './pipeline/evidence.js';
import { resolveScope } from './pipeline/resolve-scope.js';
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

/**
 * The one entry point: every protocol's request passes the six pipeline
 * stages in order, then the operation's executor. A request is allowed only
 * when every stage agrees. Failures come back as declared ServiceErrors;
 * anything undeclared is masked as INTERNAL here.
 */
export async function dispatch(inv: Invocation, services: Services): Promise<Outcome> {
  const ctx: OperationContext = {
    inv, services, actor: ANONYMOUS, scope: null, operationId: inv.operation.id, entity: null, entityOperation: null, rowPolicy: null,
    trace: { stage: 1, evaluatedFilter: null, fieldMasks: [] },
    envelope: null,
  };
  try {
    // Text PostgreSQL cannot store (U+0000, lone surrogates) is refused for every protocol here, before any stage reads it.
    refuseUnstorableInput(inv);
    ctx.actor = await authenticate(ctx); // 1
    ctx.trace.stage = 2;
    ctx.scope = await resolveScope(ctx);
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
  } catch (err) {
    // A storage connection lost in any stage (a cache load, a grant lookup) is retryable like one lost in the operation.
    const error = isConnectionError(err) ? storageUnavailable(err) : maskError(err, inv.correlationId, services.log);
    recordEvidence(ctx, httpStatusOf(error), error); // 6
    return ctx.scope === null ? { ok: false, error } : { ok: false, error, publicationVersion: ctx.scope.publication.version };
  }
}
