export { ActorId, ACTOR_SUBJECT_PREFIX, fnv1a32 } from './actor-id.js';
export { defineActor, type ActorContext, type ActorDefinition, type ActorHandler } from './define.js';
export { ActorReason, askTimeout } from './errors.js';
export {
  ActorSystem,
  ACTOR_SYSTEM_DEFAULTS,
  type ActorSystemOptions,
  type ActorSystemStats,
  type AskOptions,
} from './system.js';
export type { ActorEnvelope, ActorTransport, ActorHost } from './transport.js';
export { RingBuffer } from './mailbox.js';
export { SchedulerDriver, SCANNER_ID, type ScanReport } from './scheduling/scanner.js';
export { DispatcherDriver, dispatcherActor, dispatcherId, DISPATCHER_KIND } from './scheduling/dispatcher.js';
