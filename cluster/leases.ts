import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV, KvEntry } from '@nats-io/kv';
import type { ActorId } from '../actors/index.js';
import { ServiceError } from '../runtime/errors/service-error.js';
import type { Logger } from '../runtime/log.js';
import { transportClosed } from './errors.js';
import { retryJetStream } from './js-retry.js';
import { isWrongLastSequence, kvToken, openBucket } from './kv-bucket.js';
import type { ClusterConnection } from './nats-connection.js';

/**
 * Placement leases: which node hosts which actor, in a replicated JetStream
 * KV bucket. NATS does the consensus; this file only uses its
 * compare-and-set on a key's revision and the bucket's max age.
 *
 * - Claim: `put(key, { previousSeq: 0 })`, which fails while the key has
 *   any entry (another node's live lease).
 * - Renew: every TTL/3, `update(key, value, revision)`: a CAS, so a renewal
 *   never overwrites a lease someone else took.
 * - Release: delete our entry's stream message by its sequence (= our
 *   revision), which removes exactly our write and nothing newer.
 * - Expiry: the bucket's max age is the TTL, so the server drops an entry TTL
 *   after its last write: a dead owner's leases disappear on their own.
 *
 * Why no `kv.delete()` markers and no `kv.create()`: a delete leaves a DEL
 * marker, and `create()` then falls back to `put(previousSeq = marker)`. On
 * nats-server 2.9.10 (Debian's) with an R3 bucket, concurrent puts that
 * expect the same non-zero sequence ALL succeeded (measured: 123 of 300
 * rounds of 6 concurrent creates after a delete had more than one winner),
 * which would be two owners. Expecting sequence 0 on a key with no message
 * had exactly one winner in 400 of 400 rounds of 9, so keys are kept free of
 * markers and every claim takes that path. A marker written by a tool is
 * removed before claiming.
 *
 * Fencing: the owner trusts its lease only until `sentAt + TTL - margin`,
 * where `sentAt` is the monotonic time it *sent* the write that succeeded.
 * The server stored that write later, so it expires it after that instant
 * plus the margin, and nobody can create the key before. Every message and
 * activation checks `valid` first, and a lease past that instant is lost
 * (the transport evicts the activation). What remains unguarded is one
 * handler that was admitted just before the deadline and still runs more
 * than `margin` later; control-plane handlers are far shorter.
 *
 * Failover after an owner dies without releasing: the next message reaches
 * no responder, its node tries to claim, and succeeds once the server has
 * expired the entry: at most TTL after the owner's last renewal (so between
 * TTL·2/3 and TTL after the death), plus one claim retry (≤ 200 ms). With the
 * default 6 s TTL: ≈ 4–6.2 s. A graceful release hands off at once. An owner
 * that is frozen rather than dead keeps its subscription, so there is no "no
 * responders": the first request that times out claims instead
 * (NatsActorTransport.takeOverIfUnleased, ADR 0005).
 */

export const LEASE_BUCKET = 'plinth_actor_leases';

export const LEASE_DEFAULTS = {
  /** 6 s: failover takes ≈ TTL; shorter means more renewals (one replicated write per owned actor per TTL/3). */
  ttlMs: 6_000,
} as const;

/** Shortest TTL accepted: below it, a JetStream write's latency eats the renewal window. */
export const MIN_LEASE_TTL_MS = 300;

/** What a lease entry holds; `owner` tells this process's leases from an earlier run of the same node id. */
export interface LeaseRecord {
  nodeId: string;
  epoch: number;
  owner: string;
  claimedAt: string;
}

/** `taken`: a CAS showed another writer. `expired`: no renewal succeeded before the fencing deadline. */
export type LeaseLoss = 'taken' | 'expired';

export interface PlacementLeasesOptions {
  /** Lease TTL (also the bucket's max age). */
  ttlMs: number;
  /** How long before the TTL the owner stops trusting its lease. Default max(250 ms, TTL/4). */
  safetyMarginMs?: number;
  bucket?: string;
  /** How long open() retries creating/opening the bucket through JetStream outages. Default 30 s. */
  openDeadlineMs?: number;
  log: Logger;
  /** A live lease was lost (not released); called once, synchronously. */
  onLost(lease: Lease, why: LeaseLoss): void;
}

const LIVE = 0;
const LOST = 1;
const RELEASED = 2;

/** One actor's lease held by this node. */
export class Lease {
  /** KV revision of our last successful write: the CAS token, and a fencing token that only grows. */
  revision: number;
  /** Monotonic (performance.now) instant until which the lease may be trusted. */
  validUntil: number;
  /** Monotonic instant the last successful write was sent. */
  renewedAt: number;
  state = LIVE;
  renewTimer: NodeJS.Timeout | null = null;
  expiryTimer: NodeJS.Timeout | null = null;
  renewing: Promise<void> | null = null;

  constructor(
    /** The actor's `kind/key`. */
    readonly name: string,
    readonly key: string,
    readonly epoch: number,
    readonly value: Uint8Array,
    revision: number,
    sentAt: number,
    fenceMs: number,
  ) {
    this.revision = revision;
    this.renewedAt = sentAt;
    this.validUntil = sentAt + fenceMs;
  }

  /** True while this node may run the actor: live and before its fencing deadline. */
  get valid(): boolean {
    return this.state === LIVE && performance.now() < this.validUntil;
  }
}

/** KV key of an actor's lease: `kind.key`, each token KV-safe (see kvToken). */
export function leaseKey(id: Pick<ActorId, 'kind' | 'key'>): string {
  return `${kvToken(id.kind)}.${kvToken(id.key)}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class PlacementLeases {
  /** The TTL the bucket really has (the smaller one wins if nodes disagree). */
  readonly ttlMs: number;
  /** TTL - margin: how long after sending a write the lease is trusted. */
  readonly fenceMs: number;
  readonly renewEveryMs: number;
  private readonly owner = randomUUID();
  private epochs = 0;
  private closed = false;
  private readonly live = new Set<Lease>();

  private constructor(
    private readonly conn: ClusterConnection,
    private readonly kv: KV,
    /** The bucket's stream, whose messages release() deletes by sequence. */
    private readonly stream: string,
    ttlMs: number,
    marginMs: number,
    private readonly log: Logger,
    private readonly onLost: (lease: Lease, why: LeaseLoss) => void,
  ) {
    this.ttlMs = ttlMs;
    this.fenceMs = ttlMs - marginMs;
    this.renewEveryMs = Math.floor(ttlMs / 3);
  }

  /** Opens (or creates) the bucket: replicas = replicasFor(conn), max age = TTL, history 1. */
  static async open(conn: ClusterConnection, opts: PlacementLeasesOptions): Promise<PlacementLeases> {
    checkTtl(opts.ttlMs, opts.safetyMarginMs);
    const bucket = opts.bucket ?? LEASE_BUCKET;
    const { kv, ttlMs: actual } = await openBucket(conn, { name: bucket, ttlMs: opts.ttlMs, history: 1 }, opts.openDeadlineMs);
    if (actual <= 0) {
      throw new ServiceError('VALIDATION_FAILED', 'Actor.InvalidOptions', `KV bucket ${bucket} has no TTL: a dead node's leases would never expire`);
    }
    let ttlMs = opts.ttlMs;
    if (actual !== opts.ttlMs) {
      // A shorter bucket TTL expires entries before our deadline would: fence on it.
      opts.log.warn('lease bucket TTL differs from configuration', { bucket, bucketTtlMs: actual, configuredTtlMs: opts.ttlMs });
      ttlMs = Math.min(actual, opts.ttlMs);
    }
    const margin = Math.min(opts.safetyMarginMs ?? defaultMargin(opts.ttlMs), Math.floor(ttlMs / 2));
    return new PlacementLeases(conn, kv, `KV_${bucket}`, ttlMs, margin, opts.log, opts.onLost);
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * Tries to take the actor's lease, retrying JetStream outages until
   * `until` (monotonic). Null: another node holds a live lease. Throws when
   * the bucket stayed unreachable.
   */
  async claim(id: ActorId, until: number): Promise<Lease | null> {
    if (this.closed) throw transportClosed(this.conn.nodeId);
    const key = leaseKey(id);
    const epoch = ++this.epochs;
    const record: LeaseRecord = { nodeId: this.conn.nodeId, epoch, owner: this.owner, claimedAt: new Date().toISOString() };
    const value = encoder.encode(JSON.stringify(record));
    // Sent before the first attempt: if a retried attempt is what landed, the server stored it even later.
    const sentAt = performance.now();
    let revision = 0;
    for (let round = 0; revision === 0 && round < 3; round++) {
      try {
        revision = await this.retry(() => this.kv.put(key, value, { previousSeq: 0 }), until);
        break;
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
      const entry = await this.retry(() => this.kv.get(key), until);
      if (entry === null) continue; // expired in between: try again
      if (entry.operation === 'PUT') {
        // Held. After a retried attempt, the holder may be that attempt of ours.
        if (!this.isOurs(entry, epoch)) return null;
        revision = entry.revision;
      } else {
        await this.removeMessage(entry.revision, until); // a DEL/PURGE marker: see the file comment
      }
    }
    if (revision === 0) return null;
    const lease = new Lease(id.str, key, epoch, value, revision, sentAt, this.fenceMs);
    if (this.closed || !lease.valid) {
      // Too late to use (closed meanwhile, or the retries outlasted the fence): give it back.
      lease.state = LOST;
      void this.cleanup(lease);
      return null;
    }
    this.live.add(lease);
    this.arm(lease);
    return lease;
  }

  /**
   * Valid now? A lease past its deadline whose timer has not fired yet is
   * declared lost here, so the caller's next look sees it gone.
   */
  check(lease: Lease): boolean {
    if (lease.valid) return true;
    if (lease.state === LIVE) this.lose(lease, 'expired');
    return false;
  }

  /** Graceful hand-off: CAS delete, so the next claim anywhere succeeds at once. Never throws. */
  async release(lease: Lease): Promise<void> {
    if (lease.state !== LIVE) return;
    lease.state = RELEASED;
    this.disarm(lease);
    this.live.delete(lease);
    // A renewal in flight may still move the revision.
    if (lease.renewing !== null) await lease.renewing;
    if (this.conn.nc.isClosed()) return;
    try {
      await this.removeMessage(lease.revision, performance.now() + this.renewEveryMs);
    } catch (err) {
      this.log.warn('actor lease release failed; it expires by TTL', { actor: lease.name, ttlMs: this.ttlMs, error: String(err) });
    }
  }

  /** Stops renewing everything still held (abrupt: leases expire by TTL). Release first for a hand-off. */
  close(): void {
    this.closed = true;
    for (const lease of this.live) {
      lease.state = RELEASED;
      this.disarm(lease);
    }
    this.live.clear();
  }

  private arm(lease: Lease): void {
    this.disarm(lease);
    const now = performance.now();
    lease.renewTimer = setTimeout(() => this.renew(lease), Math.max(0, lease.renewedAt + this.renewEveryMs - now)).unref();
    lease.expiryTimer = setTimeout(() => this.check(lease), Math.max(0, lease.validUntil - now) + 1).unref();
  }

  private disarm(lease: Lease): void {
    if (lease.renewTimer !== null) clearTimeout(lease.renewTimer);
    if (lease.expiryTimer !== null) clearTimeout(lease.expiryTimer);
    lease.renewTimer = null;
    lease.expiryTimer = null;
  }

  private renew(lease: Lease): void {
    lease.renewTimer = null;
    if (lease.state !== LIVE || lease.renewing !== null) return;
    lease.renewing = this.doRenew(lease).finally(() => {
      lease.renewing = null;
    });
  }

  private async doRenew(lease: Lease): Promise<void> {
    const sentAt = performance.now();
    const expected = lease.revision;
    let attempts = 0;
    let next: number;
    try {
      next = await this.retry(() => {
        attempts++;
        const timeout = Math.max(50, Math.min(this.renewEveryMs, lease.validUntil - performance.now()));
        return this.kv.update(lease.key, lease.value, expected, timeout);
      }, lease.validUntil);
    } catch (err) {
      if (lease.state !== LIVE) return;
      if (!isWrongLastSequence(err)) {
        this.log.warn('actor lease renewal failed until its deadline', { actor: lease.name, error: String(err) });
        this.lose(lease, 'expired');
        return;
      }
      const entry = attempts > 1 ? await this.retry(() => this.kv.get(lease.key), lease.validUntil).catch(() => null) : null;
      if (entry === null || entry.operation !== 'PUT' || entry.revision <= expected || !this.isOurs(entry, lease.epoch)) {
        this.lose(lease, 'taken');
        return;
      }
      next = entry.revision; // a retried attempt of ours had landed
    }
    // Recorded even when no longer live: release() and cleanup() delete at this revision.
    lease.revision = next;
    if (lease.state !== LIVE) return;
    lease.renewedAt = sentAt;
    lease.validUntil = sentAt + this.fenceMs;
    this.arm(lease);
  }

  private lose(lease: Lease, why: LeaseLoss): void {
    if (lease.state !== LIVE) return;
    lease.state = LOST;
    this.disarm(lease);
    this.live.delete(lease);
    try {
      this.onLost(lease, why);
    } catch (err) {
      this.log.error('lease loss handler failed', { actor: lease.name, error: String(err) });
    }
    // Our entry may still be in the bucket (we only stopped trusting it): free it as soon as the KV answers.
    if (why === 'expired') void this.cleanup(lease);
  }

  /** Deletes the entry if it is still this lease's (same owner and epoch), by CAS; best effort until the TTL. */
  private async cleanup(lease: Lease): Promise<void> {
    if (lease.renewing !== null) await lease.renewing;
    const until = performance.now() + this.ttlMs;
    try {
      const entry = await this.retry(() => this.kv.get(lease.key), until);
      if (entry === null || entry.operation !== 'PUT' || !this.isOurs(entry, lease.epoch)) return;
      await this.removeMessage(entry.revision, until);
    } catch (err) {
      if (!this.conn.nc.isClosed()) {
        this.log.warn('stale actor lease not cleaned up; it expires by TTL', { actor: lease.name, error: String(err) });
      }
    }
  }

  /**
   * Deletes one stream message by sequence: our own write, never a newer
   * one. Already gone (expired, or an earlier attempt deleted it) is fine.
   */
  private async removeMessage(seq: number, until: number): Promise<void> {
    try {
      await this.retry(() => this.conn.jsm.streams.deleteMessage(this.stream, seq, false), until);
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound)) throw err;
    }
  }

  private isOurs(entry: KvEntry, epoch: number): boolean {
    try {
      const rec = JSON.parse(decoder.decode(entry.value)) as Partial<LeaseRecord>;
      return rec.owner === this.owner && rec.epoch === epoch;
    } catch {
      return false;
    }
  }

  /** retryJetStream up to a monotonic deadline; a closed connection fails at once instead of being retried. */
  private retry<T>(fn: () => Promise<T>, until: number): Promise<T> {
    const nc = this.conn.nc;
    const nodeId = this.conn.nodeId;
    return retryJetStream(
      () => (nc.isClosed() ? Promise.reject(transportClosed(nodeId)) : fn()),
      { deadlineMs: Math.max(0, until - performance.now()), delayMs: 50 },
    );
  }
}

function defaultMargin(ttlMs: number): number {
  return Math.max(250, Math.floor(ttlMs / 4));
}

function checkTtl(ttlMs: number, marginMs: number | undefined): void {
  if (!Number.isInteger(ttlMs) || ttlMs < MIN_LEASE_TTL_MS) {
    throw new ServiceError('VALIDATION_FAILED', 'Actor.InvalidOptions', `lease TTL must be an integer >= ${MIN_LEASE_TTL_MS} ms`);
  }
  if (marginMs !== undefined && (!Number.isInteger(marginMs) || marginMs < 0 || marginMs > ttlMs / 2)) {
    throw new ServiceError('VALIDATION_FAILED', 'Actor.InvalidOptions', 'lease safety margin must be an integer in 0..TTL/2 ms');
  }
}
