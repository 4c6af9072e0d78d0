import { performance } from 'node:perf_hooks';
import {
  ClosedConnectionError,
  DrainingConnectionError,
  type Msg,
} from '@nats-io/transport-node';
import { ActorId, askTimeout, type ActorEnvelope, type ActorHost, type ActorTransport } from '../actors/index.js';
import { ServiceError } from '../runtime/errors/service-error.js';
import type { Logger } from '../runtime/log.js';
import { decodeReply } from './codec.js';
import { answerRemote, drainSubscription, type Serving } from './actor-serving.js';
import { OWNED, Placement, RELEASING, unsubscribe } from './placement.js';
import { encodeRequest, isNoResponders, isTimeout, nonPlain } from './nats-wire.js';
import { ClusterReason, notOwner, ownerUnreachable, payloadTooLarge, placementUnavailable, transportClosed } from './errors.js';
import { LEASE_DEFAULTS, PlacementLeases, type Lease, type LeaseLoss } from './leases.js';
import type { ClusterConnection } from './nats-connection.js';
import { clonePlainData } from './plain-data.js';
import { fromWireError, toWireError } from './wire-error.js';

export interface NatsActorTransportOptions {
  /**
   * Placement lease TTL (the `plinth_actor_leases` bucket's max age).
   * Default 6 s. It bounds failover: when an owner dies without releasing,
   * its actors move on the next message after at most TTL (+ one claim
   * retry); a graceful close hands off at once.
   */
  leaseTtlMs?: number;
  /** Fencing margin: the owner stops trusting a lease this long before the TTL. Default max(250 ms, TTL/4). */
  leaseSafetyMarginMs?: number;
  /**
   * Longest wait for the owner's reply to one request (capped by the ask
   * deadline). Default 5 s. When it passes the ask fails with retryable
   * UNAVAILABLE `Actor.OwnerUnreachable` and is NOT resent: the owner may
   * have run it. Only "nobody ran it" cases (no responders, NotOwner) retry.
   */
  requestTimeoutMs?: number;
  log: Logger;
}

export const NATS_TRANSPORT_DEFAULTS = {
  leaseTtlMs: LEASE_DEFAULTS.ttlMs,
  /** 5 s: well above a cross-node turn, below the 10 s default ask timeout so a lost reply surfaces first. */
  requestTimeoutMs: 5_000,
} as const;

/** Between retries while another node holds the lease (or is still subscribing): 5 ms doubling to 200 ms. */
const BACKOFF_MIN_MS = 5;
const BACKOFF_MAX_MS = 200;


const CLAIM_AGAIN = 0;
const CLAIM_HELD = 1;

/**
 * Actor transport over NATS. Placement: a lease per actor in a JetStream KV
 * bucket (see leases.ts). Routing: NATS request/reply on the actor's subject,
 * which only the lease holder subscribes to; messages are msgpackr-encoded
 * and errors cross as WireError data.
 *
 * A request for an actor this node owns runs locally. Otherwise it goes to
 * the actor's subject; "no responders" means nobody hosts it, so this node
 * claims the lease, subscribes and runs it here; if another node holds the
 * lease (it is starting up or its subscription is still propagating) the
 * request is retried with a short backoff until the ask deadline.
 *
 * Delivery: a request is resent only when it certainly did not run (no
 * responders, or a NotOwner answer). A timeout is not retried here: it
 * surfaces as retryable `Actor.OwnerUnreachable` after `requestTimeoutMs`.
 * That happens to requests in flight on a NATS server that dies, to requests
 * sent to an owner that crashed, and, rarely, to a request another server
 * had already routed to an owner at the instant that owner unsubscribed in
 * a graceful hand-off (NATS drops it; the owner never sees it). After a
 * timeout this node claims the actor if the silent owner's lease has expired
 * (a frozen process, ADR 0005), so the caller's retry is served here.
 */
export class NatsActorTransport implements ActorTransport {
  private host: ActorHost | null = null;
  private leases: PlacementLeases | null = null;
  private opening: Promise<PlacementLeases> | null = null;
  private readonly placements = new Map<string, Placement>();
  /** Claims and releases in flight, for close(). */
  private readonly pending = new Set<Promise<unknown>>();
  /** Refusals created by admit(): the message did not run, so it may be routed again. */
  private readonly refusals = new WeakSet<object>();
  private readonly nodeId: string;
  private readonly log: Logger;
  private readonly ttlMs: number;
  private readonly marginMs: number | undefined;
  private readonly requestTimeoutMs: number;
  private closed = false;
  private closing: Promise<void> | null = null;
  /** What the owner's side (actor-serving.ts) needs to answer other nodes' requests. */
  private readonly serving: Serving;

  constructor(
    private readonly conn: ClusterConnection,
    opts: NatsActorTransportOptions,
  ) {
    this.nodeId = conn.nodeId;
    this.log = opts.log.child({ component: 'actor-transport' });
    this.ttlMs = opts.leaseTtlMs ?? NATS_TRANSPORT_DEFAULTS.leaseTtlMs;
    this.marginMs = opts.leaseSafetyMarginMs;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? NATS_TRANSPORT_DEFAULTS.requestTimeoutMs;
    this.serving = { nodeId: this.nodeId, log: this.log, refusals: this.refusals, host: () => this.host, current: (p) => this.placements.get(p.id.str) === p };
    if (!Number.isInteger(this.requestTimeoutMs) || this.requestTimeoutMs < 1) {
      throw new ServiceError('VALIDATION_FAILED', 'Actor.InvalidOptions', 'requestTimeoutMs must be a positive integer');
    }
    void this.openLeases().catch(noop);
  }

  /**
   * Resolves once the lease bucket is open. Await it at boot to fail on a bad
   * NATS/JetStream setup before serving. `deadlineMs` bounds a new attempt
   * to open it (one already under way keeps its own bound).
   */
  async ready(deadlineMs?: number): Promise<void> {
    await this.openLeases(deadlineMs);
  }

  /** Actors this node holds a lease for (placements in any state). */
  get owned(): number {
    return this.placements.size;
  }

  bind(system: ActorHost): void {
    if (this.host !== null) {
      throw new ServiceError('VALIDATION_FAILED', 'Actor.TransportBound', 'transport is already bound to an actor system');
    }
    this.host = system;
  }

  request(msg: ActorEnvelope, timeoutMs: number): Promise<unknown> {
    if (this.closed || this.host === null) return Promise.reject(transportClosed(this.nodeId));
    let id: ActorId;
    if (msg.target instanceof ActorId) {
      id = msg.target;
    } else {
      try {
        id = new ActorId(msg.target.kind, msg.target.key);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const deadline = performance.now() + timeoutMs;
    const p = this.placements.get(id.str);
    if (p !== undefined && p.state === OWNED && p.lease!.valid) return this.deliverHere(p, msg, deadline, timeoutMs);
    return this.route(id, msg, deadline, timeoutMs);
  }

  admit(id: ActorId): ServiceError | null {
    const p = this.placements.get(id.str);
    if (p !== undefined && p.state === OWNED && p.lease!.valid) return null;
    const refusal = notOwner(id.str, this.nodeId);
    this.refusals.add(refusal);
    return refusal;
  }

  activationEnded(id: ActorId): void {
    const p = this.placements.get(id.str);
    if (p === undefined || p.state !== OWNED || !p.delivered) return;
    this.track(this.release(p));
  }

  /** Graceful: releases every lease (other nodes take the actors at once) and unsubscribes. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(Array.from(this.pending));
    // Claims and releases have settled: what is left is owned.
    const held = Array.from(this.placements.values()).filter((p) => p.state === OWNED);
    await Promise.allSettled(held.map((p) => this.release(p)));
    this.placements.clear();
    this.leases?.close();
    this.log.info('actor transport closed', { released: held.length });
  }

  private async route(id: ActorId, msg: ActorEnvelope, deadline: number, timeoutMs: number): Promise<unknown> {
    let wire: Uint8Array | null = null;
    let backoff = BACKOFF_MIN_MS;
    for (;;) {
      if (this.closed) throw transportClosed(this.nodeId);
      const p = this.placements.get(id.str);
      if (p !== undefined) {
        if (p.state !== OWNED) {
          await p.settled;
          continue;
        }
        if (this.leases!.check(p.lease!)) return this.deliverHere(p, msg, deadline, timeoutMs);
        continue; // check() just dropped it
      }
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw askTimeout(id.str, msg.type, timeoutMs);
      wire ??= encodeRequest(msg);
      const timeout = Math.max(1, Math.floor(Math.min(remaining, this.requestTimeoutMs)));
      let reply: Msg;
      try {
        reply = await this.conn.nc.request(id.subject, wire, { timeout });
      } catch (err) {
        if (isTimeout(err)) this.takeOverIfUnleased(id);
        if (!isNoResponders(err)) throw this.requestFailed(err, id, msg.type, timeout);
        // Nobody serves the actor: take it here, unless another node holds a live lease.
        if ((await this.claim(id, deadline)) === CLAIM_HELD) {
          await sleep(Math.min(backoff, Math.max(0, deadline - performance.now())));
          backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
        }
        continue;
      }
      const answer = decodeReply(reply.data);
      if (answer.ok) return answer.value;
      if (answer.error.reasonCode !== ClusterReason.NotOwner) throw fromWireError(answer.error);
      // The owner is handing the actor back; the message did not run.
      await sleep(Math.min(backoff, Math.max(0, deadline - performance.now())));
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /**
   * The actor's subscriber did not answer. If it still holds a live lease it
   * is slow or cut off, and the caller gets OwnerUnreachable as before. If
   * its lease has expired, it is a frozen process (SIGSTOP, a VM stall, a
   * long GC pause): its subscription outlives its lease, so NATS keeps
   * handing it the actor's messages and "no responders", which is how a dead
   * owner's actors move, never comes. A claim succeeds exactly in that case
   * (claims need the key to have no live entry), and from then on this node
   * serves the actor. The frozen process runs nothing when it wakes: it
   * checks its lease before every message. The request that timed out is
   * not resent (it may have reached an owner that was still valid), it
   * fails retryably at once; the claim runs in the background (bounded by
   * the TTL, in case JetStream is down too) and the retry waits for it.
   */
  private takeOverIfUnleased(id: ActorId): void {
    if (this.closed || this.placements.has(id.str)) return;
    const claimed = this.claim(id, performance.now() + this.ttlMs).then((result) => {
      if (result !== CLAIM_HELD && this.placements.get(id.str)?.state === OWNED) {
        this.log.warn('actor owner silent past its lease: taken over', { actor: id.str });
      }
    });
    this.track(claimed); // close() waits for it; a failure (bucket unreachable too) leaves the next request to retry
  }

  /** Single flight per actor: concurrent requests on this node wait for one claim. */
  private async claim(id: ActorId, deadline: number): Promise<number> {
    if (this.placements.has(id.str)) return CLAIM_AGAIN;
    const p = new Placement(id);
    this.placements.set(id.str, p);
    const done = this.doClaim(p, deadline);
    this.track(done);
    try {
      return await done;
    } finally {
      p.settle();
    }
  }

  private async doClaim(p: Placement, deadline: number): Promise<number> {
    const key = p.id.str;
    let lease: Lease | null;
    try {
      const leases = this.leases ?? (await this.openLeases());
      lease = await leases.claim(p.id, deadline);
    } catch (err) {
      if (this.placements.get(key) === p) this.placements.delete(key);
      if (ServiceError.is(err) && err.reasonCode === ClusterReason.TransportClosed) throw err;
      throw placementUnavailable(key, err);
    }
    if (this.closed) {
      // close() began meanwhile: give it straight back.
      if (this.placements.get(key) === p) this.placements.delete(key);
      if (lease !== null) await this.leases!.release(lease);
      return CLAIM_AGAIN;
    }
    if (lease === null) {
      this.placements.delete(key);
      return CLAIM_HELD;
    }
    try {
      p.sub = this.conn.nc.subscribe(p.id.subject, { callback: (err, m) => answerRemote(this.serving, p, err, m) });
    } catch {
      // Only a closed connection makes subscribe() throw.
      this.placements.delete(key);
      await this.leases!.release(lease);
      throw transportClosed(this.nodeId);
    }
    p.lease = lease;
    p.state = OWNED;
    return CLAIM_AGAIN;
  }

  /**
   * Hand-off: drain the subscription first (requests already on their way
   * get NotOwner and retry), then delete the lease, so when another node can
   * claim it no request is left with us.
   */
  private async release(p: Placement): Promise<void> {
    p.state = RELEASING;
    p.nextSettled();
    try {
      await drainSubscription(p, this.conn);
      await this.leases!.release(p.lease!);
    } finally {
      if (this.placements.get(p.id.str) === p) this.placements.delete(p.id.str);
      p.settle();
    }
  }

  /** Lease lost (renewal CAS failed or its deadline passed): stop serving and drop the activation. */
  private onLeaseLost(lease: Lease, why: LeaseLoss): void {
    const p = this.placements.get(lease.name);
    if (p === undefined || p.lease !== lease) return;
    this.placements.delete(lease.name);
    unsubscribe(p);
    p.settle();
    this.log.warn('actor lease lost', { actor: lease.name, why });
    this.host?.evict(p.id);
  }

  /** Local run, with the same copy and error semantics as over the wire (see InProcessTransport). */
  private async deliverHere(p: Placement, msg: ActorEnvelope, deadline: number, timeoutMs: number): Promise<unknown> {
    let payload: unknown;
    try {
      payload = clonePlainData(msg.payload);
    } catch (err) {
      throw nonPlain(err, 'VALIDATION_FAILED', 'Actor.NonPlainPayload', `payload of ${msg.type}`);
    }
    p.delivered = true;
    let value: unknown;
    try {
      value = await this.host!.deliverLocal({ target: p.id, type: msg.type, payload, correlationId: msg.correlationId });
    } catch (err) {
      // Refused by admit(): the lease went away while the message was queued, and it did not run.
      if (this.refusals.has(err as object)) return this.route(p.id, msg, deadline, timeoutMs);
      throw fromWireError(toWireError(err));
    }
    try {
      return clonePlainData(value);
    } catch (err) {
      throw nonPlain(err, 'INTERNAL', 'Actor.NonPlainReply', 'reply');
    }
  }

  private requestFailed(err: unknown, id: ActorId, type: string, timeoutMs: number): ServiceError {
    if (isTimeout(err)) return ownerUnreachable(id.str, type, timeoutMs);
    if (err instanceof ClosedConnectionError || err instanceof DrainingConnectionError || this.conn.nc.isClosed()) return transportClosed(this.nodeId);
    if (err instanceof Error && /max_payload/.test(err.message)) return payloadTooLarge(`message ${type}`);
    this.log.warn('actor request failed', { actor: id.str, type, error: String(err) });
    return new ServiceError('UNAVAILABLE', ClusterReason.OwnerUnreachable, `request to ${id.str} failed`, { retryable: true }, err);
  }

  private openLeases(deadlineMs?: number): Promise<PlacementLeases> {
    if (this.opening === null) {
      const opening = PlacementLeases.open(this.conn, {
        ttlMs: this.ttlMs,
        ...(deadlineMs === undefined ? {} : { openDeadlineMs: deadlineMs }),
        ...(this.marginMs === undefined ? {} : { safetyMarginMs: this.marginMs }),
        log: this.log,
        onLost: (lease, why) => this.onLeaseLost(lease, why),
      });
      this.opening = opening;
      opening.then(
        (leases) => {
          this.leases = leases;
          if (this.closed) leases.close();
        },
        (err: unknown) => {
          // The next claim tries again.
          if (this.opening === opening) this.opening = null;
          this.log.warn('actor lease bucket not available', { error: String(err) });
        },
      );
    }
    return this.opening;
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.then(noop, noop).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function noop(): void {}
