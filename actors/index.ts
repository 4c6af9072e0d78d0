export { ActorId, ACTOR_SUBJECT_PREFIX, fnv1a32 } from './actor-id.js';
export { defineActor, type ActorContext, type ActorDefinition, type ActorHandler } from './define.js';
export { ActorReason } from './errors.js';
export {
  ActorSystem,
  ACTOR_SYSTEM_DEFAULTS,
  type ActorSystemOptions,
  type ActorSystemStats,
  type AskOptions,
} from './system.js';
export type { ActorEnvelope, ActorTransport } from './transport.js';
