import type { ActorId } from './actor-id.js';
import type { ServiceError } from '../runtime/errors/service-error.js';

/**
 * How actor messages reach the node that hosts the actor. The actor system
 * sees only this interface, so the in-process transport and the NATS one
 * (JetStream KV lease for placement, request/reply on the actor's subject,
 * msgpackr encoding) are interchangeable without touching actor code.
 */

/**
 * One message to one actor. `payload` and the reply are plain JSON-compatible
 * data: a transport may encode them. `target` may be an ActorId (which is a
 * `{ kind, key }` with precomputed routing fields); encoders send kind and key only.
 */
export interface ActorEnvelope {
  target: { kind: string; key: string };
  type: string;
  payload: unknown;
  correlationId?: string;
}

/** What a transport may call on the actor system it is bound to. */
export interface ActorHost {
  /** Run a message on a local activation (created on demand). */
  deliverLocal(msg: ActorEnvelope): Promise<unknown>;
  /**
   * Drop the local activation of `target` now, without deactivate(): this
   * node no longer owns the actor (cluster: its lease was lost or taken), so
   * writing state back could overwrite the new owner's. A running handler
   * finishes; queued messages are then refused through `admit()`.
   */
  evict(target: ActorId): void;
}

export interface ActorTransport {
  /**
   * Route a message to wherever the actor lives (in-process: here) and return
   * the reply. A failure rejects with a ServiceError that has crossed the wire
   * as data (see wire-error.ts). The caller enforces the ask deadline itself;
   * `timeoutMs` lets a transport bound its own waiting (a NATS request
   * timeout, an inbox subscription) to the same deadline.
   */
  request(msg: ActorEnvelope, timeoutMs: number): Promise<unknown>;
  /** Bind the local system that executes messages placed on this node. */
  bind(system: ActorHost): void;
  /**
   * Fencing, checked before each activation and each message a local
   * activation runs: `null` lets it run; an error (retryable, the message did
   * not run) refuses it and drops the activation's state. Cluster: this node
   * cannot prove it still holds the actor's lease. Absent: always admitted.
   */
  admit?(target: ActorId): ServiceError | null;
  /**
   * The system holds no activation and no queued message for `target` any
   * more (passivated, discarded after a failure, stopped, evicted). Cluster:
   * release the lease so another node may take the actor at once.
   */
  activationEnded?(target: ActorId): void;
  /** Stop routing (cluster: unsubscribe and release leases). Called by the system after it has drained. */
  close(): Promise<void>;
}
