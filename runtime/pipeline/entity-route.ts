import { notFound, type ServiceError } from '../errors/service-error.js';
import type { OperationContext, Scope } from '../operations/types.js';

/** The route-unknown answer, shared by the router and by entity resolution. */
export const routeUnknown = (): ServiceError => notFound('Route.Unknown', 'no route matches this path');

/**
 * Stage 2's last step for an entity route: the collection and the generic
 * spec's kind (and relation) resolved to the concrete `Entity.<Entity>.<Kind>`
 * of the pinned publication. Also the whole of stage 2 for a nested call (an
 * authored handler's `ctx.db`), which keeps its caller's scope.
 */
export function resolveEntityRoute(ctx: OperationContext, scope: Scope): void {
  const { inv } = ctx;
  // Set before an unknown collection answers 404: that answer, too, names the publication that lacked it.
  ctx.scope = scope;
  const entity = scope.publication.byCollection.get(inv.collection!);
  if (entity === undefined) throw routeUnknown();
  const kind = inv.operation.id.split('.')[2]!;
  const opId = `Entity.${entity.entityName}.${kind}${inv.relation === null ? '' : `.${inv.relation}`}`;
  const op = scope.publication.operations.get(opId);
  if (op === undefined) throw routeUnknown();
  ctx.entity = entity;
  ctx.entityOperation = op;
  ctx.operationId = opId;
}
