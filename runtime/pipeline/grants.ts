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
 * The exposure binding an invocation resolves to (refusals name it; binding
 * stability is keyed by it): an entity operation's own binding on the protocol
 * it came by (`graphql:Entity.Order.Create`, `mcp:…`, `grpc:…`), an authored operation's likewise
 * (`graphql:Operation.<name>`), otherwise the REST one.
 */
export const bindingIdOf = (ctx: OperationContext): string => {
  if (ctx.inv.bindingId !== undefined) return ctx.inv.bindingId;
  const p = ctx.inv.protocol;
  // Entity operations and authored operations (`Operation.<name>`) have a binding per protocol; platform operations only REST's.
  const perProtocol = ctx.operationId.startsWith('Entity.') || ctx.operationId.startsWith('Operation.');
  return `${p !== 'rest' && perProtocol ? p : 'rest'}:${ctx.operationId}`;
};

/** What the caller holds: `all` for the admin; the grant strings (with their policy parts) otherwise. */
export async function heldGrants(ctx: OperationContext): Promise<'all' | { grants: ReadonlySet<string>; policy: GrantPolicySet | null }> {
  if (ctx.actor.kind === 'admin') return 'all';
  if ((ctx.actor.kind !== 'user' && ctx.actor.kind !== 'apikey') || ctx.scope === null) return { grants: new Set(), policy: null };
  // An API key acts with exactly its own grants: no role or subject grants are merged in.
  if (ctx.actor.kind === 'apikey') return { grants: ctx.actor.keyGrants ?? new Set<string>(), policy: ctx.actor.keyPolicy ?? null };
  return ctx.services.grants.heldWithPolicy(ctx.scope.project.id, ctx.actor.subjectId!, ctx.actor.roles);
}

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
  const h = await heldGrants(ctx);
  if (h === 'all') return null;
  const held = h.grants;
  const policy = h.policy;
  const missing = required.filter((g) => !grantCovered(held, g));
  if (missing.length > 0) {
    throw accessDenied('ExposureBinding.RequiredGrantMissing', `missing grants: ${missing.join(', ')}`, {
      missingGrants: missing,
      bindingId: bindingIdOf(ctx),
    });
  }
  return policy;
}
