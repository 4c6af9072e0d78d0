import type { ServiceError } from '../errors/service-error.js';
import { exhaustedReason } from '../quota/catalog.js';
import { NO_CONCURRENCY_QUOTAS, type ConcurrencyQuotas } from '../quota/ledger.js';
import { concurrencyQuotaError as quotaError, StreamSlots } from '../streams/stream-slots.js';

/** Subscriptions held by the other nodes of a cluster, for the per-project quota. */
export interface PeerUsage {
  /** Subscriptions the other live nodes hold for the project (as last announced). */
  othersOf(projectId: string): number;
  /** This node's count for the project changed (the peers are told, debounced). */
  changed(projectId: string, count: number): void;
  close(): void;
}

/** Configured bounds (node/config.ts: REALTIME_MAX_*). */
export interface RealtimeLimits {
  /** Concurrent subscriptions per project, cluster-wide when peers are known (spec: 1,000), unless a project quota sets its own. */
  perProject: number;
  /** Subscriptions on one WebSocket connection (an SSE stream is one subscription). */
  perConnection: number;
  /** Distinct filters per project, counted per node: each costs a column in every check of its entity. */
  filtersPerProject: number;
}

export const DEFAULT_REALTIME_LIMITS: RealtimeLimits = { perProject: 1000, perConnection: 100, filtersPerProject: 500 };

/** The quota kind of every subscription bound (runtime/quota/catalog.ts CONCURRENT_KINDS): one mechanism with project quotas. */
export const QUOTA_KIND = 'realtime.subscriptions';
export const FILTER_QUOTA_KIND = 'realtime.filters.distinct';

/** What one subscription slot counts against. */
export interface SlotHolder {
  projectId: string;
  /** The actor's label (`user:<subject>`); null for the platform admin (not limited per actor). */
  actor: string | null;
  /** The distinct filter (its row check key, table included); null when unfiltered. */
  filterKey: string | null;
}

/** The per-project bound: the project's hard (or reservation) `realtime.subscriptions` quota, else the node's default. */
const projectLimit = (limits: RealtimeLimits, quotas: ConcurrencyQuotas): number => quotas.enforced?.limit ?? limits.perProject;

/**
 * Realtime subscription accounting on one node. Slots are taken
 * synchronously (`reserve`), so concurrent subscribes on this node cannot
 * overshoot any bound; `release` gives them back. Checks run narrowest
 * first: actor and node (the node's stream slots, shared with every other
 * long-lived stream), then distinct filters, then project.
 */
export class SubscriptionLimits {
  private readonly used = new Map<string, number>();
  /** Per project: distinct filter key → subscriptions (and reservations) using it. */
  private readonly filters = new Map<string, Map<string, number>>();

  constructor(readonly limits: RealtimeLimits, private readonly peers?: PeerUsage, readonly streams: StreamSlots = new StreamSlots()) {}

  /** Subscriptions (and reserved slots) of a project: this node's, plus the peers' in cluster mode. */
  usedBy(projectId: string): number {
    return this.localUsedBy(projectId) + (this.peers?.othersOf(projectId) ?? 0);
  }

  localUsedBy(projectId: string): number {
    return this.used.get(projectId) ?? 0;
  }

  actorUsed(projectId: string, actor: string): number {
    return this.streams.actorUsed(projectId, actor);
  }

  distinctFilters(projectId: string): number {
    return this.filters.get(projectId)?.size ?? 0;
  }

  /** Handshake check: 429 when the actor, the node or the project has no free slot. */
  check(projectId: string, actor: string | null, quotas: ConcurrencyQuotas = NO_CONCURRENCY_QUOTAS): void {
    this.streams.check({ projectId, actor }, 'subscription');
    const used = this.usedBy(projectId);
    const limit = projectLimit(this.limits, quotas);
    if (used >= limit) {
      throw quotaError(exhaustedReason(QUOTA_KIND), `at most ${limit} realtime subscriptions open at once in this project`, QUOTA_KIND, limit, used);
    }
  }

  /** 429 for a connection that already holds `used` subscriptions (in flight included), or null. */
  connectionFull(used: number): ServiceError | null {
    if (used < this.limits.perConnection) return null;
    return quotaError('Quota.RealtimeSubscriptionsPerConnection', `at most ${this.limits.perConnection} realtime subscriptions per connection`, QUOTA_KIND, this.limits.perConnection, used);
  }

  /** Takes a slot for the holder; 429 (nothing taken) when a bound is reached. Answers the project's open subscriptions after it. */
  reserve(h: SlotHolder, quotas: ConcurrencyQuotas = NO_CONCURRENCY_QUOTAS): number {
    this.check(h.projectId, h.actor, quotas);
    const filters = this.filters.get(h.projectId);
    if (h.filterKey !== null && filters?.has(h.filterKey) !== true && (filters?.size ?? 0) >= this.limits.filtersPerProject) {
      throw quotaError('Quota.RealtimeFilters', `at most ${this.limits.filtersPerProject} distinct realtime filters per project (subscribers sharing a filter count once)`, FILTER_QUOTA_KIND, this.limits.filtersPerProject, filters?.size ?? 0);
    }
    this.streams.reserve(h, 'subscription');
    this.setUsed(h.projectId, this.localUsedBy(h.projectId) + 1);
    if (h.filterKey !== null) {
      const m = filters ?? new Map<string, number>();
      m.set(h.filterKey, (m.get(h.filterKey) ?? 0) + 1);
      this.filters.set(h.projectId, m);
    }
    return this.usedBy(h.projectId);
  }

  /** Gives back a slot taken by reserve(). */
  release(h: SlotHolder): void {
    this.setUsed(h.projectId, Math.max(0, this.localUsedBy(h.projectId) - 1));
    this.streams.release(h);
    if (h.filterKey !== null) {
      const m = this.filters.get(h.projectId);
      const n = (m?.get(h.filterKey) ?? 0) - 1;
      if (n > 0) m!.set(h.filterKey, n);
      else m?.delete(h.filterKey);
      if (m?.size === 0) this.filters.delete(h.projectId);
    }
  }

  close(): void {
    this.peers?.close();
  }

  private setUsed(projectId: string, n: number): void {
    if (n === 0) this.used.delete(projectId);
    else this.used.set(projectId, n);
    this.peers?.changed(projectId, n);
  }
}
