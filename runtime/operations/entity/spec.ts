import type { EntityOperationKind } from '../../publication/operations.js';
import type { OperationContext, OperationSpec, Result } from '../types.js';

/**
 * Declares the generic spec of one entity operation kind. Stage 2 resolves
 * it to the concrete `Entity.<Entity>.<Kind>` of the pinned publication;
 * the grants come from that publication's operation (plus `extraGrants`,
 * e.g. read grants for `include`).
 */
export function entitySpec(
  kind: EntityOperationKind,
  execute: (ctx: OperationContext) => Promise<Result>,
  extraGrants: (ctx: OperationContext) => readonly string[] = () => [],
): OperationSpec {
  return {
    id: `Entity.*.${kind}`,
    authn: 'user',
    scope: 'project',
    grants: (ctx) => {
      const own = ctx.entityOperation?.requiredGrants ?? [];
      const extra = extraGrants(ctx);
      return extra.length === 0 ? own : [...new Set([...own, ...extra])];
    },
    execute,
  };
}
