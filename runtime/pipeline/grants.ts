import { accessDenied } from '../errors/service-error.js';
import type { OperationContext } from '../operations/types.js';
import type { GrantPolicySet } from '../policy/grant-policy.js';

/** Whether `held` covers `required` (`entity:<Entity>:<verb>`), with `*` wildcards for entity and verb. */
export function grantCovered(held: ReadonlySet<string>, required: string): boolean {
  if (held.has(required)) return true;
  const [area, entity, verb] = required.split(':');
  return held.has(`${area}:${entity}:*`) || held.has(`${area}:*:${verb}`) || held.has(`${area}:*:*`);
}

/**
 * The exposure binding a refusal names: a GraphQL root field's or gRPC
 * method's own binding (`graphql:Entity.Order.Create`, `grpc:Entity.Order.Create`), otherwise the REST one.
 */
const bindingIdOf = (ctx: OperationContext): string =>
  `${(ctx.inv.protocol === 'graphql' || ctx.inv.protocol === 'grpc') && ctx.operationId.startsWith('Entity.') ? ctx.inv.protocol : 'rest'}:${ctx.operationId}`;

/**
 * Stage 4: capability grants. The platform admin holds every grant.
 * Returns the caller's grants with their row-policy parts for stage 5, or
 * null when none carries one (or no grant was needed).
 */
export async function checkGrants(ctx: OperationContext): Promise<GrantPolicySet | null> {
  const required = ctx.inv.operation.grants(ctx);
  if (required.length === 0 || ctx.actor.kind === 'admin') return null;
  if ((ctx.actor.kind !== 'user' && ctx.actor.kind !== 'apikey') || ctx.scope === null) {
    throw accessDenied('ExposureBinding.RequiredGrantMissing', 'this operation needs grants', { missingGrants: [...required], bindingId: bindingIdOf(ctx) });
  }
  // An API key acts with exactly its own grants: no role or subject grants are merged in.
  let held: ReadonlySet<string>;
  let policy: GrantPolicySet | null;
  if (ctx.actor.kind === 'apikey') {
    held = ctx.actor.keyGrants ?? new Set<string>();
    policy = ctx.actor.keyPolicy ?? null;
  } else {
    const h = await ctx.services.grants.heldWithPolicy(ctx.scope.project.id, ctx.actor.subjectId!, ctx.actor.roles);
    held = h.grants;
    policy = h.policy;
  }
  const missing = required.filter((g) => !grantCovered(held, g));
  if (missing.length > 0) {
    throw accessDenied('ExposureBinding.RequiredGrantMissing', `missing grants: ${missing.join(', ')}`, {
      missingGrants: missing,
      bindingId: bindingIdOf(ctx),
    });
  }
  return policy;
}
