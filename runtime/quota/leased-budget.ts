import { ServiceError } from '../errors/service-error.js';
import { LEASE_TTL_MS, type LeaseReply, type LeaseRequest } from './budget-owner.js';

export type LeaseExchange = (projectId: string, req: LeaseRequest) => Promise<LeaseReply | null>;

/** Cluster mode: how nodes take budget chunks from each quota's owner (docs/adr/0007-quota-budget-leases.md). */
export interface LeaseOptions {
  nodeId: string;
  exchange: LeaseExchange;
}

/** Windows a lease can cover: one bucket per window, so the owner keeps one count per quota. Rolling windows count per node. */
export const CALENDAR_WINDOWS: ReadonlySet<string> = new Set(['calendar-month', 'day', 'hour']);

/** A lease chunk: a sixteenth of the limit, at least 1 and at most 10,000 units; the overshoot bound is per chunk (ADR 0007). */
export const chunkOf = (limit: number): number => Math.max(1, Math.min(10_000, Math.floor(limit / 16)));

/** A lease is trusted until this long before it ends at the owner (clock skew, message latency). */
const SAFETY_MS = 1_000;

/**
 * One node's chunk of a quota's budget in cluster mode (docs/adr/0007):
 * checks are local (`available`), and only an exhausted, expiring or
 * renewing lease talks to the owner, one exchange at a time.
 */
export class LeasedBudget {
  private remaining = 0;
  /** Units held by this node's operations in flight. */
  pending = 0;
  private unreported = 0;
  private ownerUsed = 0;
  private windowStart = -1;
  private trustedUntil = 0;
  private inflight: Promise<void> | null = null;
  /** Units asked for by requests waiting on the next exchange. */
  private demand = 0;

  constructor(readonly quotaId: string, readonly projectId: string, private readonly nodeId: string, private readonly exchange: LeaseExchange, private readonly chunk: number) {}

  available(now: number, windowStart: number): number {
    if (windowStart !== this.windowStart || now >= this.trustedUntil) return 0;
    return this.remaining - this.pending;
  }

  /** The usage before this request as this node knows it: the owner's count at the last exchange plus this node's since. */
  usedEstimate(): number {
    return this.ownerUsed + this.unreported + this.pending;
  }

  settle(estimate: number, actual: number): void {
    this.pending -= estimate;
    this.remaining -= actual;
    this.unreported += actual;
    // Renew ahead of exhaustion, so the next requests do not wait for the owner.
    if (this.remaining - this.pending < Math.ceil(this.chunk / 2)) this.refill(1).catch(() => {});
  }

  release(estimate: number): void {
    this.pending -= estimate;
  }

  /** Whether the node holds a lease or owes a report (the renewal timer's question). */
  get active(): boolean {
    return this.remaining > 0 || this.unreported > 0;
  }

  /** The quota changed: the lease is used again only after an exchange with the owner (which applies the new limit). */
  distrust(): void {
    this.trustedUntil = 0;
  }

  /** The renewal timer: report, keep the lease alive, and top it up when it runs low. */
  renew(): Promise<void> {
    return this.refill(this.remaining - this.pending < this.chunk ? 1 : 0);
  }

  /** Reports consumption and tops the lease up by at least `need` units (-1: hand it back). Concurrent callers share one exchange. */
  refill(need: number): Promise<void> {
    // A request that arrives while an exchange is under way waits for it; its caller checks again and may ask once more.
    if (need > 0) this.demand += need;
    this.inflight ??= this.swap(need < 0).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async swap(handBack: boolean): Promise<void> {
    const consumed = this.unreported;
    const want = handBack ? -1 : this.demand === 0 ? 0 : Math.max(this.demand + this.pending - Math.max(0, this.remaining), this.chunk);
    this.demand = 0;
    const sentAt = Date.now();
    let reply: LeaseReply | null;
    try {
      reply = await this.exchange(this.projectId, { quotaId: this.quotaId, nodeId: this.nodeId, consumed, want });
    } catch (err) {
      throw new ServiceError('UNAVAILABLE', 'Quota.OwnerUnavailable', 'the quota budget could not be renewed; retry shortly', {}, err);
    }
    this.unreported -= consumed;
    if (reply === null) {
      this.remaining = 0;
      return;
    }
    this.ownerUsed = reply.used;
    // The owner's lease = what this node may still consume + what it consumed since it sent (not reported yet).
    this.remaining = reply.units - this.unreported;
    this.windowStart = reply.windowStart;
    // The owner counts the lease from when it received the request: trusting it from when it was sent is on the safe side.
    this.trustedUntil = sentAt + LEASE_TTL_MS - SAFETY_MS;
  }
}
