import type { Logger } from '../log.js';
import type { SqlClient } from '../../storage/index.js';
import { CONCURRENT_KINDS, ENFORCED_KINDS, parseWindow, type QuotaWindow } from './catalog.js';
import type { UsageSink } from '../usage/sink.js';
import { hasUsageEvents, loadBuckets, persistBuckets, type BucketUsage } from './counter-store.js';
import { QuotaCounter } from './counter.js';
import { counterSignature, listQuotas, type QuotaRecord } from './store.js';
import { meteredOf, type AdmissionRequest, type Metered } from './units.js';
import { concurrencyOf, decide, holds, type ActiveQuota, type ConcurrencyQuotas, type QuotaHold, type WorkRef } from './admission.js';
import { LEASE_TTL_MS } from './budget-owner.js';
import { CAP_PREFIX, capQuotas, counterKey, isCap, NIL_UUID } from './cap-quotas.js';
import { CALENDAR_WINDOWS, chunkOf, LeasedBudget, type LeaseOptions } from './leased-budget.js';

export { NO_CONCURRENCY_QUOTAS, type ConcurrencyQuotas, type QuotaHold } from './admission.js';

/** Cluster mode: the longest a node serves a project's quotas without reloading them (a missed change notice). */
const REFRESH_MS = 30_000;
/**
 * Cluster mode: how often a node raises the counters no lease covers (soft, monitor,
 * rolling windows, governance caps) to the durable usage every node wrote, so their counts
 * are cluster-wide within this lag (docs/usage.md "Cluster mode").
 */
export const UNLEASED_SYNC_MS = 2_000;

export interface QuotaSummaryRow { quotaId: string; kind: string; mode: string; limit: number; used: number }

/**
 * The quota owner of this node (runtime/quota/, docs/usage.md "Quotas").
 * Holds each project's active quotas (loaded at first use, dropped when
 * the Project actor changes one) and one exact counter per quota, checked
 * and incremented in-process: no database or NATS round trip per request.
 * Counters start from the durable state and are written back in batches.
 */
export class QuotaLedger {
  private readonly projects = new Map<string, ActiveQuota[] | Promise<ActiveQuota[]>>();
  private readonly generation = new Map<string, number>();
  private readonly loadedAt = new Map<string, number>();
  private readonly counters = new Map<string, QuotaCounter>();
  private eventsTable: Promise<boolean> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly renewTimer: NodeJS.Timeout | null = null;
  private readonly syncTimer: NodeJS.Timeout | null = null;
  private syncing = false;
  private flushing: Promise<void> = Promise.resolve();
  /** Cluster mode: this node's budget leases, by quota id and counter signature. */
  private readonly budgets = new Map<string, LeasedBudget>();
  /** The governance caps over a project (envelope `maxQuotas`); none until the node sets the source. */
  private caps: (projectId: string) => Promise<Readonly<Record<string, number>>> = async () => ({});
  /** What `summary` reports as used for a concurrency kind (realtime: open subscriptions, cluster-wide). */
  private readonly gauges = new Map<string, (projectId: string) => number>();
  private readonly changeListeners: Array<(projectId: string) => void> = [];

  constructor(
    private readonly db: SqlClient, private readonly log: Logger, flushMs = 1_000, private readonly leases: LeaseOptions | null = null,
    /** Where soft quotas' `<kind>.overage` events go: the node's usage sink, looked up when one is recorded. */
    private readonly usage: () => UsageSink | undefined = () => undefined,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
    if (leases !== null) {
      this.renewTimer = setInterval(() => this.renewLeases(), Math.floor(LEASE_TTL_MS / 3));
      this.renewTimer.unref();
      this.syncTimer = setInterval(() => void this.syncUnleased(), UNLEASED_SYNC_MS);
      this.syncTimer.unref();
    }
  }

  /**
   * Cluster mode: counters no lease covers count this node's operations only;
   * raise them to the durable usage (every node's events, flushed within
   * ~50 ms) so soft overage, monitor counts, rolling windows and governance
   * caps see the whole cluster, UNLEASED_SYNC_MS behind at most.
   */
  async syncUnleased(): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    try {
      const now = Date.now();
      for (const list of [...this.projects.values()]) {
        if (list instanceof Promise) continue;
        for (const a of list) {
          if (a.budget !== null || !ENFORCED_KINDS.has(a.rec.kind)) continue;
          a.counter.raiseTo(await this.loadInitial(a.rec, a.window, now));
        }
      }
    } catch (err) {
      this.log.warn('quota counters not synced with the durable usage', { error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.syncing = false;
    }
  }

  private renewLeases(): void {
    for (const b of this.budgets.values()) {
      if (b.active) b.renew().catch((err: unknown) => this.log.warn('quota lease not renewed', { quotaId: b.quotaId, error: err instanceof Error ? err.message : String(err) }));
    }
  }

  /** Graceful stop (before the actors stop): report what was consumed and hand every lease back. */
  async returnLeases(): Promise<void> {
    if (this.renewTimer !== null) clearInterval(this.renewTimer);
    if (this.syncTimer !== null) clearInterval(this.syncTimer);
    await Promise.all([...this.budgets.values()].filter((b) => b.active).map((b) => b.refill(-1).catch(() => {})));
  }

  /**
   * Dispatch's quota stage: null when no quota applies (the common case, a
   * map lookup once the project is loaded); throws the hard answer when the
   * operation does not fit a hard or reservation quota, before any work.
   */
  admit(ctx: AdmissionRequest): QuotaHold | null | Promise<QuotaHold | null> {
    if (ctx.scope === null) return null;
    const m = meteredOf(ctx);
    if (m === null) return null;
    const loaded = this.active(ctx.scope.project.id);
    const work: WorkRef = { operationId: ctx.operationId, correlationId: ctx.inv.correlationId };
    return loaded instanceof Promise ? loaded.then((list) => decide(work, m, list, this.usage)) : decide(work, m, loaded, this.usage);
  }

  /**
   * The same check for work that does not pass through dispatch (a webhook
   * delivery attempt): null when no quota applies; throws the hard answer
   * when it does not fit; otherwise a hold to settle with the units used.
   */
  async admitWork(projectId: string, m: Metered, work: WorkRef): Promise<QuotaHold | null> {
    return decide(work, m, await this.active(projectId), this.usage);
  }

  /** The project's quotas of a concurrency kind; synchronous once the project's quotas are loaded. */
  concurrency(projectId: string, kind: string): ConcurrencyQuotas | Promise<ConcurrencyQuotas> {
    const loaded = this.active(projectId);
    return loaded instanceof Promise ? loaded.then((list) => concurrencyOf(list, kind)) : concurrencyOf(loaded, kind);
  }

  /** `summary` reads a concurrency kind's `used` from this gauge (the realtime hub registers open subscriptions). */
  setGauge(kind: string, used: (projectId: string) => number): void {
    this.gauges.set(kind, used);
  }

  /** Where the governance caps come from (runtime/quota/caps.ts). */
  setCaps(caps: (projectId: string) => Promise<Readonly<Record<string, number>>>): void {
    this.caps = caps;
  }

  /** An envelope changed somewhere: it may cap any descendant, so every project reloads its quotas. */
  invalidateAll(): void {
    for (const projectId of [...this.projects.keys()]) this.invalidate(projectId);
  }

  /** Called after a project's quotas changed on this node (the webhook dispatcher releases the deliveries a quota held). */
  onChanged(listener: (projectId: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** `GET …/summary`: each quota with its usage in the current window. */
  async summary(projectId: string): Promise<QuotaSummaryRow[]> {
    const list = await this.active(projectId);
    const now = Date.now();
    const out: QuotaSummaryRow[] = [];
    for (const a of list) {
      const gauge = this.gauges.get(a.rec.kind);
      let used = ENFORCED_KINDS.has(a.rec.kind) ? a.counter.used(now) : gauge !== undefined ? gauge(projectId) : 0;
      // Cluster mode: the owner's count (persisted at each lease exchange) and the durable usage of every node cover the other nodes too.
      if (a.budget !== null) used = Math.max(used, a.budget.usedEstimate(), sum(await this.loadInitial(a.rec, a.window, now)));
      else if (this.leases !== null && ENFORCED_KINDS.has(a.rec.kind)) used = Math.max(used, sum(await this.loadInitial(a.rec, a.window, now)));
      out.push({ quotaId: a.rec.id, kind: a.rec.kind, mode: a.rec.mode, limit: a.rec.limit, used });
    }
    return out;
  }

  /** A quota of the project was created, changed or deleted: the next request reloads them. */
  invalidate(projectId: string): void {
    this.projects.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
    for (const l of this.changeListeners) l(projectId);
  }

  private active(projectId: string): ActiveQuota[] | Promise<ActiveQuota[]> {
    const hit = this.projects.get(projectId);
    if (hit !== undefined) {
      if (this.leases !== null && !(hit instanceof Promise)) this.refreshIfOld(projectId);
      return hit;
    }
    const gen = this.generation.get(projectId) ?? 0;
    const loading = this.load(projectId).then(
      (list) => {
        if ((this.generation.get(projectId) ?? 0) === gen) {
          this.projects.set(projectId, list);
          this.loadedAt.set(projectId, Date.now());
        }
        else if (this.projects.get(projectId) === loading) this.projects.delete(projectId);
        return list;
      },
      (err: unknown) => {
        if (this.projects.get(projectId) === loading) this.projects.delete(projectId);
        throw err;
      },
    );
    this.projects.set(projectId, loading);
    return loading;
  }

  /**
   * Cluster mode: a quota change notice a node missed (bus hiccup) is
   * bounded: a project's quotas older than REFRESH_MS are reloaded in the
   * background while the cached ones keep answering.
   */
  private refreshIfOld(projectId: string): void {
    const at = this.loadedAt.get(projectId) ?? 0;
    if (Date.now() - at < REFRESH_MS) return;
    this.loadedAt.set(projectId, Date.now());
    const gen = this.generation.get(projectId) ?? 0;
    this.load(projectId).then(
      (list) => {
        if ((this.generation.get(projectId) ?? 0) === gen && !(this.projects.get(projectId) instanceof Promise)) this.projects.set(projectId, list);
      },
      (err: unknown) => this.log.warn('quotas not reloaded', { projectId, error: err instanceof Error ? err.message : String(err) }),
    );
  }

  private async load(projectId: string): Promise<ActiveQuota[]> {
    const [stored, caps] = await Promise.all([listQuotas(this.db, projectId), this.caps(projectId)]);
    const recs = [...stored.filter((r) => r.state === 'active'), ...capQuotas(projectId, caps)];
    const now = Date.now();
    const keep = new Set(recs.map(counterKey));
    for (const [id, c] of this.counters) if (c.projectId === projectId && !keep.has(id)) this.counters.delete(id);
    const out: ActiveQuota[] = [];
    for (const rec of recs) {
      const window = parseWindow(rec.window);
      if (window === null) continue; // not writable through the routes; skipped rather than failing every request
      const signature = counterSignature(rec);
      let counter = this.counters.get(counterKey(rec));
      // A cap's counter is this node's: in cluster mode it restarts from the durable usage at each reload (docs/usage.md "Governance caps").
      if (counter === undefined || counter.signature !== signature || (isCap(rec) && this.leases !== null)) {
        counter = new QuotaCounter(rec.id, projectId, signature, window, ENFORCED_KINDS.has(rec.kind) ? await this.loadInitial(rec, window, now) : new Map());
        this.counters.set(counterKey(rec), counter);
      }
      out.push({ rec, window, counter, budget: this.budgetOf(rec, signature) });
    }
    return out;
  }

  private budgetOf(rec: QuotaRecord, signature: string): LeasedBudget | null {
    if (this.leases === null || !holds(rec.mode) || !CALENDAR_WINDOWS.has(rec.window) || CONCURRENT_KINDS.has(rec.kind) || isCap(rec)) return null;
    const key = `${rec.id}|${signature}`;
    let b = this.budgets.get(key);
    if (b === undefined) {
      for (const k of this.budgets.keys()) if (k.startsWith(`${rec.id}|`)) this.budgets.delete(k);
      b = new LeasedBudget(rec.id, rec.projectId, this.leases.nodeId, this.leases.exchange, chunkOf(rec.limit));
      this.budgets.set(key, b);
    }
    // Loaded after a change of this project's quotas: a changed limit applies from the next request.
    b.distrust();
    return b;
  }

  private loadInitial(rec: QuotaRecord, window: QuotaWindow, now: number): Promise<Map<number, number>> {
    this.eventsTable ??= hasUsageEvents(this.db).catch(() => false);
    // A cap has no stored row (nor persisted counter): its count is the durable usage alone.
    const stored = isCap(rec) ? { ...rec, id: NIL_UUID } : rec;
    return this.eventsTable.then((withEvents) => loadBuckets(this.db, stored, window.liveFrom(now), (t) => window.bucketStart(t), withEvents));
  }

  /** Writes the counters changed since the last flush in one statement (every second, and at shutdown). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const rows: BucketUsage[] = [];
      const by = new Map<string, QuotaCounter>();
      for (const c of this.counters.values()) {
        const d = c.takeDirty();
        // A governance cap has no quota row: its count is the durable usage events alone.
        if (c.quotaId.startsWith(CAP_PREFIX)) continue;
        if (d.length > 0) by.set(c.quotaId, c);
        rows.push(...d);
      }
      if (rows.length === 0) return;
      try {
        await persistBuckets(this.db, rows);
      } catch (err) {
        this.log.warn('quota counters not persisted; retried at the next flush', { error: err instanceof Error ? err.message : String(err) });
        for (const r of rows) by.get(r.quotaId)?.restore([r]);
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.syncTimer !== null) clearInterval(this.syncTimer);
    await this.flush();
  }
}

const sum = (m: Map<number, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
