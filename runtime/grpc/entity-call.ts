import type { EntityArgs } from '../entities/entity-args.js';
import type { ServiceError } from '../errors/service-error.js';
import type { EntityOperationKind } from '../publication/operations.js';
import { ENTITY_SPECS } from '../operations/entity/index.js';
import type { Invocation, OperationContext, Result } from '../operations/types.js';
import type { DispatchFn } from './exchange.js';
import type { GrpcEntityTypes } from './schema.js';

const EMPTY_QUERY: ReadonlyMap<string, string> = new Map();

/** What one call needs to dispatch its entity operations: the Grpc.Call context, the dispatcher and the entity's types. */
export interface CallContext {
  ctx: OperationContext;
  dispatch: DispatchFn;
  types: GrpcEntityTypes;
  /** The method's exposure binding (`grpc:Entity.Order.List.Stream`): every operation the call dispatches is refused, and retired, as that binding. */
  bindingId: string;
}

/** The outcome of one dispatched operation: its result, or the ServiceError it was refused with (already recorded). */
export class Refused {
  constructor(readonly error: ServiceError) {}
}

/**
 * Dispatches the entity operation a method projects (its REST twin) with
 * `protocol: 'grpc'`: grants, row policy, masks, quotas, audit and usage
 * are REST's. Stage 1 ran for the call: the operation keeps its actor.
 */
export async function dispatchEntity(cc: CallContext, kind: EntityOperationKind, extra: Partial<Invocation> & { args?: EntityArgs }): Promise<Result> {
  const base = cc.ctx.inv;
  const inv: Invocation = {
    correlationId: base.correlationId, protocol: 'grpc', operation: ENTITY_SPECS[kind], collection: cc.types.entity.collection, relation: null,
    params: {}, query: EMPTY_QUERY, body: undefined, bearer: base.bearer, tenantHeader: base.tenantHeader, projectHeader: base.projectHeader,
    branchHeader: base.branchHeader, idempotencyKey: null, ifMatch: null, basePath: base.basePath, clientAddress: base.clientAddress ?? null,
    authenticated: cc.ctx.actor, bindingId: cc.bindingId,
    ...extra,
  };
  const out = await cc.dispatch(inv);
  if (!out.ok) throw new Refused(out.error);
  return out.result;
}

export const dataOf = <T>(result: Result): T => (result.body as { data: T }).data;
