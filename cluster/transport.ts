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
  bind(system: { deliverLocal(msg: ActorEnvelope): Promise<unknown> }): void;
  /** Stop routing (cluster: unsubscribe and release leases). Called by the system after it has drained. */
  close(): Promise<void>;
}
