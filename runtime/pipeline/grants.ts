import { accessDenied } from '../errors/service-error.js';
import type { OperationContext } from '../operations/types.js';

/** Whether `held` covers `required` (`entity:<Entity>:<verb>`), with `*` wildcards for entity and verb. */
export function grantCovered(held: ReadonlySet<string>, required: string): boolean {
  if (held.has(required)) return true;
  const [area, entity, verb] = required.split(':');
  return held.has(`${area}:${entity}:*`) || held.has(`${area}:*:${verb}`) || held.has(`${area}:*:*`);
}

/** Stage 4: capability grants. The platform admin holds every grant. */
export async function checkGrants(ctx: OperationContext): Promise<void> {
  const required = ctx.inv.operation.grants(ctx);
  if (required.length === 0 || ctx.actor.kind === 'admin') return;
  if ((ctx.actor.kind !== 'user' && ctx.actor.kind !== 'apikey') || ctx.scope === null) {
    throw accessDenied('ExposureBinding.RequiredGrantMissing', 'this operation needs grants', { missingGrants: [...required], bindingId: `rest:${ctx.operationId}` });
  }
  // An API key acts with exactly its own grants: no role or subject grants are merged in.
  const held = ctx.actor.kind === 'apikey'
    ? (ctx.actor.keyGrants ?? new Set<string>())
    : await ctx.services.grants.held(ctx.scope.project.id, ctx.actor.subjectId!, ctx.actor.roles);
  const missing = required.filter((g) => !grantCovered(held, g));
  if (missing.length > 0) {
    throw accessDenied('ExposureBinding.RequiredGrantMissing', `missing grants: ${missing.join(', ')}`, {
      missingGrants: missing,
      bindingId: `rest:${ctx.operationId}`,
    });
  }
}
