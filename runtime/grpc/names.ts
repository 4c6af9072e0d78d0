import type { EntityCapability } from '../publication/entity-capabilities.js';
import { pluralize } from '../publication/naming.js';

/** The proto package every project's file declares (CONTRACT: gRPC). */
export const PROTO_PACKAGE = 'service.app';
/** The file name the proto is served and reflected as. */
export const PROTO_FILE_NAME = 'service-app.proto';

/** The methods of every entity service; the kind fixes how grpc-js frames the call. */
export const GRPC_METHODS = {
  Get: 'unary', List: 'unary', Create: 'unary', Update: 'unary', Delete: 'unary',
  StreamList: 'serverStream', Watch: 'serverStream', BatchCreate: 'clientStream',
} as const;
export type GrpcMethodName = keyof typeof GRPC_METHODS;
export type GrpcCallKind = (typeof GRPC_METHODS)[GrpcMethodName];

/**
 * What each method projects: the entity operation it dispatches (its REST
 * twin), or `Subscribe` for Watch (realtime's subscribe). The call handlers,
 * the exposure bindings and the capability matrix read this one table.
 */
export const GRPC_METHOD_CAPABILITIES = {
  Get: 'Read', List: 'List', Create: 'Create', Update: 'Update', Delete: 'Delete',
  StreamList: 'List', BatchCreate: 'BatchCreate', Watch: 'Subscribe',
} as const satisfies Record<GrpcMethodName, EntityCapability>;

export const isGrpcMethod = (name: string): name is GrpcMethodName => Object.prototype.hasOwnProperty.call(GRPC_METHODS, name);

/** Message and service names of one entity (CONTRACT: gRPC, `Order` → `OrderService`, `ListOrdersRequest`, …). */
export interface GrpcEntityNames {
  service: string;
  message: string;
  input: string;
  getRequest: string;
  listRequest: string;
  listResponse: string;
  createRequest: string;
  updateRequest: string;
  deleteRequest: string;
  deleteResponse: string;
  watchRequest: string;
  change: string;
  batchResponse: string;
}

export function grpcEntityNames(entityName: string): GrpcEntityNames {
  const plural = pluralize(entityName);
  return {
    service: `${entityName}Service`,
    message: entityName,
    input: `${entityName}Input`,
    getRequest: `Get${entityName}Request`,
    listRequest: `List${plural}Request`,
    listResponse: `List${plural}Response`,
    createRequest: `Create${entityName}Request`,
    updateRequest: `Update${entityName}Request`,
    deleteRequest: `Delete${entityName}Request`,
    deleteResponse: `Delete${entityName}Response`,
    watchRequest: `Watch${plural}Request`,
    change: `${entityName}Change`,
    batchResponse: `BatchCreate${plural}Response`,
  };
}

/** `placedAt` → `placed_at` (field names have no underscores, so the mapping is one-to-one). */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * `/service.app.OrderService/Get` → its service and method; null for any
 * other path. A method that is no entity method may be an authored
 * operation's (`/service.app.OrderService/Approve`,
 * `/service.app.OperationService/Recalculate`): unary, decided per call.
 */
export function parseMethodPath(path: string): { service: string; method: string } | null {
  const m = /^\/service\.app\.([A-Z][A-Za-z0-9]{0,62}Service)\/([A-Z][A-Za-z0-9]{0,62})$/.exec(path);
  if (m === null) return null;
  return { service: m[1]!, method: m[2]! };
}

/**
 * The entities the proto can carry: an entity whose generated names clash
 * with another's (`Order` makes `OrderInput`; an entity named `OrderInput`
 * would then collide) is left out, later names yielding to earlier ones.
 */
export function servableGrpcEntities<E extends { entityName: string }>(entities: Iterable<E>): { kept: E[]; skipped: string[] } {
  const taken = new Set<string>();
  const kept: E[] = [];
  const skipped: string[] = [];
  for (const e of entities) {
    const names = Object.values(grpcEntityNames(e.entityName));
    if (names.some((n) => taken.has(n))) {
      skipped.push(e.entityName);
      continue;
    }
    for (const n of names) taken.add(n);
    kept.push(e);
  }
  return { kept, skipped };
}
