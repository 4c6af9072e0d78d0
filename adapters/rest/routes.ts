import { ENTITY_SPECS } from '../../runtime/operations/entity/index.js';
import type { OperationSpec } from '../../runtime/operations/types.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A fixed route: path segments after the base, `:name` captures a parameter. */
export interface StaticRoute {
  method: Method;
  path: string;
  spec: OperationSpec;
}

/**
 * Every non-entity REST route of the platform: the routes of the declared
 * operations, as their contracts name them (runtime/operations/catalog.ts).
 * Entity routes are resolved by shape in router.ts. A WebSocket upgrade
 * (Realtime.Connect) is registered by the realtime adapter (server.ts), not here.
 */
export const STATIC_ROUTES: StaticRoute[] = PLATFORM_OPERATIONS.filter((spec) => spec.contract.output.upgrade !== true)
  .flatMap((spec) => spec.contract.routes.map((r) => ({ method: r.method, path: r.path, spec })));

/** Two routes with one method and path would leave one unreachable: refused when the table loads. */
const seen = new Set<string>();
for (const r of STATIC_ROUTES) {
  const key = `${r.method} ${r.path.replace(/:\w+/g, ':')}`;
  if (seen.has(key)) throw new Error(`route ${r.method} ${r.path} is declared twice`);
  seen.add(key);
}

export { ENTITY_SPECS };
