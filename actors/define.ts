import type { Logger } from '../runtime/log.js';
import type { ActorId } from './actor-id.js';

export interface AskOptions {
  timeoutMs?: number;
  correlationId?: string;
}

/** What a handler may do with its actor system: message other actors (actors/system.ts's ActorSystem is one). */
export interface ActorMessenger {
  ask<R = unknown>(id: ActorId, type: string, payload: unknown, opts?: AskOptions): Promise<R>;
  tell(id: ActorId, type: string, payload: unknown): void;
}

/** What a handler sees: its actor's identity and state, and the system to reach other actors. */
export interface ActorContext<S> {
  readonly id: ActorId;
  /** Exclusive handlers may replace it; it is dropped when the activation is discarded. */
  state: S;
  readonly log: Logger;
  readonly system: ActorMessenger;
}

/**
 * A handler's payload and its resolved value cross the transport, which in
 * cluster mode encodes them with msgpackr: both must be plain JSON-compatible
 * data. A handler signals a declared failure by throwing a ServiceError; any
 * other throw is treated as a bug and discards the activation.
 */
export type ActorHandler<S, Deps> = (ctx: ActorContext<S>, payload: any, deps: Deps) => Promise<unknown>;

export interface ActorDefinition<S, Deps> {
  kind: string;
  /** Loads durable state on activation (state lives in SQL; an actor can be reactivated anywhere). */
  activate(id: ActorId, deps: Deps): Promise<S>;
  /** message type -> handler; handlers run one at a time per activation (single writer). */
  handlers: Record<string, ActorHandler<S, Deps>>;
  /** Idle time before passivation; default from system options. */
  idleMs?: number;
  /**
   * Runs on passivation and on system stop, never after a handler crashed
   * (the state may then be inconsistent and must not be written back).
   */
  deactivate?(ctx: ActorContext<S>, deps: Deps): Promise<void>;
}

/** Declares an actor as data; identity at runtime, it exists to infer S and Deps at the call site. */
export function defineActor<S, Deps>(def: ActorDefinition<S, Deps>): ActorDefinition<S, Deps> {
  return def;
}
