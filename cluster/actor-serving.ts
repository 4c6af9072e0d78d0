import type { Msg } from '@nats-io/transport-node';
import { ActorReason, type ActorEnvelope, type ActorHost } from '../actors/index.js';
import { ServiceError } from '../runtime/errors/service-error.js';
import type { Logger } from '../runtime/log.js';
import { decodeEnvelope, encodeReply } from './codec.js';
import { notOwner, payloadTooLarge } from './errors.js';
import type { ClusterConnection } from './nats-connection.js';
import { encodeReplyValue, respond } from './nats-wire.js';
import { RELEASING, unsubscribe, type Placement } from './placement.js';
import { toWireError } from './wire-error.js';

/**
 * The owner's half of the NATS actor transport: answering requests that other
 * nodes send on the subject of an actor this node holds, and draining that
 * subscription when the actor is handed back. The caller's half (routing,
 * claiming, leases) is NatsActorTransport.
 */
export interface Serving {
  nodeId: string;
  log: Logger;
  /** Errors admit() refused with: the message did not run. */
  refusals: WeakSet<object>;
  host(): ActorHost | null;
  /** Whether `p` is still this node's placement of its actor (not lost or released). */
  current(p: Placement): boolean;
}

/** Longest wait for a subscription drain during a hand-off. */
const DRAIN_LIMIT_MS = 1_000;

/** A request from another node on the actor's subject. */
export function answerRemote(s: Serving, p: Placement, err: Error | null, m: Msg): void {
  if (err !== null) {
    s.log.warn('actor subscription error', { actor: p.id.str, error: String(err) });
    return;
  }
  if (!s.current(p)) return; // lost or released: someone else may own it now, stay silent
  if (p.state === RELEASING || !p.lease!.valid) {
    // Still ours in the bucket, so nobody else ran it: tell the caller to retry.
    if (p.state === RELEASING) respond(m, encodeReply({ ok: false, error: toWireError(notOwner(p.id.str, s.nodeId)) }));
    return;
  }
  let env: ActorEnvelope;
  try {
    env = decodeEnvelope(m.data);
  } catch (e) {
    respond(m, encodeReply({ ok: false, error: toWireError(e) }));
    return;
  }
  if (env.target.kind !== p.id.kind || env.target.key !== p.id.key) {
    respond(m, encodeReply({ ok: false, error: toWireError(new ServiceError('INTERNAL', 'Actor.MalformedMessage', 'envelope target does not match its subject')) }));
    return;
  }
  p.delivered = true;
  void serve(s, p, env, m);
}

async function serve(s: Serving, p: Placement, env: ActorEnvelope, m: Msg): Promise<void> {
  let bytes: Uint8Array;
  try {
    const value = await s.host()!.deliverLocal({ target: p.id, type: env.type, payload: env.payload, correlationId: env.correlationId });
    bytes = encodeReplyValue(value);
  } catch (err) {
    bytes = encodeReply({ ok: false, error: toWireError(didNotRun(s, err) ? notOwner(p.id.str, s.nodeId) : err) });
  }
  if (!respond(m, bytes)) respond(m, encodeReply({ ok: false, error: toWireError(payloadTooLarge('reply')) }));
}

/**
 * Refused by admit(), or the system is draining: the message did not run
 * and the lease is still ours, so nobody else ran it either. The caller
 * retries and lands on the next owner.
 */
function didNotRun(s: Serving, err: unknown): boolean {
  return s.refusals.has(err as object) || (ServiceError.is(err) && err.reasonCode === ActorReason.SystemStopped);
}

/** Hand-off: requests already on their way are answered (NotOwner) before the subscription goes. Bounded. */
export async function drainSubscription(p: Placement, conn: ClusterConnection): Promise<void> {
  const sub = p.sub;
  if (sub === null || conn.nc.isClosed()) {
    unsubscribe(p);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    // Bounded: while disconnected a drain would wait for the reconnect.
    await Promise.race([sub.drain(), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_LIMIT_MS)))]);
  } catch {
    // connection closed meanwhile
  } finally {
    clearTimeout(timer);
    unsubscribe(p);
  }
}
