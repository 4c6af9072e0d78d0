import { ENTITY_OPERATION_KINDS } from './operations.js';

/**
 * What a protocol can offer of an entity: each of its operations, and a
 * subscription to its changes (realtime, GraphQL subscriptions, gRPC Watch).
 * Closed: a `Record<EntityCapability, …>` breaks the build when one is added.
 * Its own module so that the protocols' tables (grpc/names.ts) can name it
 * while capabilities.ts reads those tables.
 */
export const ENTITY_CAPABILITIES = [...ENTITY_OPERATION_KINDS, 'Subscribe'] as const;
export type EntityCapability = (typeof ENTITY_CAPABILITIES)[number];
