import { accessDenied, type ServiceError } from '../errors/service-error.js';
import { weakerThan, type CompiledEnvelope } from '../governance/compiled.js';
import type { StepUpStrength } from '../governance/envelope.js';
import { AUTH_STRENGTHS, type Actor, type OperationContext } from '../operations/types.js';

/**
 * Stage 3: the project's effective governance envelope (merged fail-closed
 * down its ancestry, compiled once per change: runtime/governance/). A
 * project with no envelope in its chain costs one map lookup. The envelope
 * is left on the context for the list page-size cap, which binds every caller.
 *
 * For users and API keys: an operation whose required grant (the list stage
 * 4 checks) exceeds the envelope is refused, even when a grant that predates
 * the envelope covers it; one whose grant matches a requireStrength pattern
 * needs a session at least that strong (`Challenge`). The platform admin is
 * exempt from both: it is the operator's break-glass credential and holds
 * no grants. Anonymous callers fall through to stage 4, which refuses them.
 */
export function evaluateGovernance(ctx: OperationContext): void | Promise<void> {
  const source = ctx.services.governance;
  if (ctx.scope === null || source === undefined) return;
  const envelope = source.effective(ctx.scope.project.id);
  if (envelope instanceof Promise) return envelope.then((e) => apply(ctx, e));
  apply(ctx, envelope);
}

function apply(ctx: OperationContext, envelope: CompiledEnvelope | null): void {
  ctx.envelope = envelope;
  if (envelope === null || (ctx.actor.kind !== 'user' && ctx.actor.kind !== 'apikey')) return;
  const refusal = governanceRefusal(envelope, ctx.actor, ctx.inv.operation.grants(ctx), ctx.operationId);
  if (refusal !== null) throw refusal;
}

/**
 * What the envelope says about `actor` using an operation that needs
 * `required`: null to go on, else the denial (`Governance.EnvelopeExceeded`)
 * or the step-up challenge (`Access.StepUpRequired`). Exported for
 * Explainability, which must answer what stage 3 would.
 */
export function governanceRefusal(envelope: CompiledEnvelope, actor: Actor, required: readonly string[], operationId: string): ServiceError | null {
  if (actor.kind !== 'user' && actor.kind !== 'apikey') return null;
  let strength: StepUpStrength | null = null;
  for (const g of required) {
    if (envelope.exceeds(g)) {
      return accessDenied('Governance.EnvelopeExceeded', `${g} is outside the project's governance envelope`, { bindingId: `rest:${operationId}` });
    }
    const s = envelope.requiredStrength(g);
    if (s !== null && (strength === null || AUTH_STRENGTHS.indexOf(s) > AUTH_STRENGTHS.indexOf(strength))) strength = s;
  }
  if (strength !== null && weakerThan(actor.strength, strength)) {
    return accessDenied('Access.StepUpRequired', `this operation needs a session of strength ${strength}`, { decision: 'Challenge', requiredStrength: strength });
  }
  return null;
}
