import { GRAPHQL_ROOT_KINDS } from '../graphql/names.js';
import { GRPC_METHOD_CAPABILITIES } from '../grpc/names.js';
import { TOOL_KINDS } from '../mcp/tool-kinds.js';
import type { ProtocolName } from '../versioning/platform.js';
import { ENTITY_CAPABILITIES, type EntityCapability } from './entity-capabilities.js';
import { ENTITY_OPERATION_KINDS } from './operations.js';

export { ENTITY_CAPABILITIES, type EntityCapability };

/**
 * What each protocol serves of every entity, read from the tables its own
 * builder uses (GraphQL's root fields, MCP's tools, gRPC's methods), so the
 * capability matrix cannot drift from what is served. A `Record` over the
 * protocols: a new protocol does not build until it is declared here.
 */
const SERVED: Record<ProtocolName, readonly EntityCapability[]> = {
  // Every entity operation is a REST route (publication/operations.ts); subscribing is realtime's.
  rest: ENTITY_OPERATION_KINDS,
  // The root fields, and `<entity>Changed` (graphql-ws) on the same path.
  graphql: [...Object.values(GRAPHQL_ROOT_KINDS), 'Subscribe'],
  realtime: ['Subscribe'],
  // Webhooks deliver committed events to endpoints; no entity operation runs on a webhook request.
  webhooks: [],
  mcp: Object.values(TOOL_KINDS),
  grpc: Object.values(GRPC_METHOD_CAPABILITIES),
};

/** `matrix` of `GET /api/ExecutionCapabilityMatrix/matrix`: for each protocol, each capability, whether this build serves it. */
export function capabilityMatrix(): Record<ProtocolName, Record<EntityCapability, boolean>> {
  const row = (served: readonly EntityCapability[]): Record<EntityCapability, boolean> =>
    Object.fromEntries(ENTITY_CAPABILITIES.map((c) => [c, served.includes(c)])) as Record<EntityCapability, boolean>;
  return Object.fromEntries(Object.entries(SERVED).map(([p, served]) => [p, row(served)])) as Record<ProtocolName, Record<EntityCapability, boolean>>;
}
