import type { AuthoredOperation } from '../publication/authored-operations.js';
import { operationTypeName } from '../publication/authored-operations.js';
import { grpcEntityNames, isGrpcMethod } from './names.js';

/** The service of project operations (CONTRACT "Operations": `OperationService`). */
export const OPERATION_SERVICE = 'OperationService';

/** Where an authored operation is served: `OrderService/Approve` or `OperationService/Recalculate`. */
export interface GrpcOperationRef {
  service: string;
  method: string;
}

export const grpcOperationRef = (op: Pick<AuthoredOperation, 'entity' | 'name'>): GrpcOperationRef => ({
  service: op.entity === null ? OPERATION_SERVICE : grpcEntityNames(op.entity).service,
  method: operationTypeName(op.name),
});

/**
 * The authored operations the proto can carry, given the entities it carries
 * (names.ts servableGrpcEntities): an instance operation needs its entity's
 * service; a method name an entity method already has (`list` → `List`) or an
 * earlier operation took on the same service is left out; project operations
 * need `OperationService` free (an entity named `Operation` has taken it).
 */
export function servableGrpcOperations(ops: readonly AuthoredOperation[], keptEntities: readonly string[]): AuthoredOperation[] {
  const served = new Set(keptEntities);
  const taken = new Set<string>();
  const out: AuthoredOperation[] = [];
  for (const op of ops) {
    if (op.entity !== null ? !served.has(op.entity) : served.has('Operation')) continue;
    const ref = grpcOperationRef(op);
    const key = `${ref.service}/${ref.method}`;
    if (isGrpcMethod(ref.method) || taken.has(key)) continue;
    taken.add(key);
    out.push(op);
  }
  return out;
}
