import type { OperationContext } from '../operations/types.js';
import { CompiledPolicy } from '../policy/compiled-policy.js';
import type { GrantPolicySet } from '../policy/grant-policy.js';
import { RowPolicy } from '../policy/row-policy.js';
import { VERB_OF } from '../publication/operations.js';

/**
 * Stage 5: row policy and field masks (runtime/policy/). Called only for
 * callers whose grants carry rowFilter/check/fields; everyone else keeps
 * `ctx.rowPolicy` null and pays nothing here. The policy is compiled once
 * per (publication, grant set); per request only the `$actor` values are
 * bound. An entity operation whose every grant needs a claim the token
 * lacks is refused here (403 `Access.DeniedByMissingClaim`).
 */
export function evaluateRowPolicy(ctx: OperationContext, set: GrantPolicySet): void {
  if (ctx.scope === null) return;
  const compiled = CompiledPolicy.for(ctx.scope.publication, set);
  let policy = compiled.views.get(ctx.actor) as RowPolicy | undefined;
  if (policy === undefined) compiled.views.set(ctx.actor, (policy = new RowPolicy(compiled, ctx.actor)));
  ctx.rowPolicy = policy;
  const entity = ctx.entity;
  const op = ctx.entityOperation;
  if (entity === null || op === null) return;
  const verb = VERB_OF[op.kind];
  const subject = op.kind === 'RelationAttach' || op.kind === 'RelationDetach' ? null : entity;
  if (subject !== null) policy.requireLive(subject, verb);
  if (verb === 'read') {
    const v = policy.read(entity);
    ctx.trace.fieldMasks = v.masked;
    ctx.trace.evaluatedFilter = v.evaluatedRows(ctx.actor);
  }
}
