import type { Logger } from '../log.js';
import type { OperationContext, Result } from '../operations/types.js';
import type { SqlClient } from '../../storage/index.js';
import { ENFORCED_KINDS, parseWindow, type QuotaWindow } from './catalog.js';
import { hasUsageEvents, loadBuckets, persistBuckets, type BucketUsage } from './counter-store.js';
import { QuotaCounter } from './counter.js';
import { quotaExceeded } from './exceeded.js';
import { counterSignature, listQuotas, type QuotaRecord } from './store.js';
import { actualUnits, meteredOf, type Metered } from './units.js';
import { LEASE_TTL_MS } from './budget-owner.js';
import { CALENDAR_WINDOWS, chunkOf, LeasedBudget, type LeaseOptions } from './leased-budget.js';

/** An admitted operation's claim on its quotas: settled after it ran, released if it failed. */
export interface QuotaHold {
  settle(result: Result): void;
  release(): void;
}

interface ActiveQuota {
  rec: QuotaRecord;
  window: QuotaWindow;
  counter: QuotaCounter;
  /** Cluster mode, hard and reservation quotas over a calendar window: this node's budget lease; null: the local counter decides. */
  budget: LeasedBudget | null;
}

/** Cluster mode: the longest a node serves a project's quotas without reloading them (a missed change notice). */
const REFRESH_MS = 30_000;


export interface QuotaSummaryRow { quotaId: string; kind: string; mode: string; limit: number; used: number }

/** hard and reservation refuse what does not fit, and hold an operation's units while it runs. */
const holds = (mode: string): boolean => mode === 'hard' || mode === 'reservation';

/** A quota applies to an operation when each of its dimensions equals the operation's (`entity` is the one operations carry). */
const applies = (q: QuotaRecord, m: Metered): boolean => {
  if (q.kind !== m.kind) return false;
  for (const k in q.dimensions) if (k !== 'entity' || q.dimensions[k] !== m.entity) return false;
  return true;
};

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
  private flushing: Promise<void> = Promise.resolve();
  /** Cluster mode: this node's budget leases, by quota id and counter signature. */
  private readonly budgets = new Map<string, LeasedBudget>();

  constructor(private readonly db: SqlClient, private readonly log: Logger, flushMs = 1_000, private readonly leases: LeaseOptions | null = null) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
    if (leases !== null) {
      this.renewTimer = setInterval(() => this.renewLeases(), Math.floor(LEASE_TTL_MS / 3));
      this.renewTimer.unref();
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
    await Promise.all([...this.budgets.values()].filter((b) => b.active).map((b) => b.refill(-1).catch(() => {})));
  }

  /**
   * Dispatch's quota stage: null when no quota applies (the common case, a
   * map lookup once the project is loaded); throws the hard answer when the
   * operation does not fit a hard or reservation quota, before any work.
   */
  admit(ctx: OperationContext): QuotaHold | null | Promise<QuotaHold | null> {
    if (ctx.scope === null) return null;
    const m = meteredOf(ctx);
    if (m === null) return null;
    const loaded = this.active(ctx.scope.project.id);
    return loaded instanceof Promise ? loaded.then((list) => this.decide(ctx, m, list)) : this.decide(ctx, m, loaded);
  }

  private decide(ctx: OperationContext, m: Metered, list: ActiveQuota[]): QuotaHold | null | Promise<QuotaHold | null> {
    if (list.length === 0) return null;
    const mine = list.filter((a) => applies(a.rec, m));
    if (mine.length === 0) return null;
    const short = this.check(mine, m, Date.now(), false);
    if (short.length === 0) return this.hold(ctx, m, mine);
    return this.topUp(ctx, m, mine, short);
  }

  /**
   * Cluster mode, a lease ran short: ask the owner (requests waiting at once
   * share one exchange), check again, and ask once more if this request's
   * demand missed that exchange; then the same check decides.
   */
  private async topUp(ctx: OperationContext, m: Metered, mine: ActiveQuota[], short: LeasedBudget[]): Promise<QuotaHold> {
    for (let attempt = 0; ; attempt++) {
      await Promise.all(short.map((b) => b.refill(m.estimate)));
      short = this.check(mine, m, Date.now(), attempt === 1);
      if (short.length === 0) return this.hold(ctx, m, mine);
    }
  }

  /** Throws the hard answer for what does not fit; returns the leases to top up first (only when not `final`). */
  private check(mine: ActiveQuota[], m: Metered, now: number, final: boolean): LeasedBudget[] {
    const short: LeasedBudget[] = [];
    // Every quota is checked before any is reserved: a refused operation holds nothing.
    for (const a of mine) {
      if (!holds(a.rec.mode)) continue;
      if (a.budget !== null) {
        if (a.budget.available(now, a.window.bucketStart(now)) >= m.estimate) continue;
        if (final) throw quotaExceeded(a.rec.kind, a.rec.limit, a.budget.usedEstimate(), a.window, now);
        short.push(a.budget);
        continue;
      }
      const used = a.counter.used(now) + a.counter.pending;
      if (used + m.estimate > a.rec.limit) throw quotaExceeded(a.rec.kind, a.rec.limit, used, a.window, now);
    }
    return short;
  }

  private hold(ctx: OperationContext, m: Metered, mine: ActiveQuota[]): QuotaHold {
    for (const a of mine) {
      if (!holds(a.rec.mode)) continue;
      if (a.budget !== null) a.budget.pending += m.estimate;
      else a.counter.pending += m.estimate;
    }
    let done = false;
    return {
      settle: (result) => {
        if (done) return;
        done = true;
        const units = actualUnits(m, result);
        const at = Date.now();
        for (const a of mine) {
          if (holds(a.rec.mode)) {
            if (a.budget !== null) a.budget.settle(m.estimate, units);
            else a.counter.pending -= m.estimate;
          }
          const before = a.counter.used(at);
          a.counter.add(at, units);
          if (a.rec.mode === 'soft') this.overage(ctx, a, before, units, at);
        }
      },
      release: () => {
        if (done) return;
        done = true;
        for (const a of mine) {
          if (!holds(a.rec.mode)) continue;
          if (a.budget !== null) a.budget.release(m.estimate);
          else a.counter.pending -= m.estimate;
        }
      },
    };
  }

  /** soft: the units of this operation beyond the limit become a `<kind>.overage` usage event. */
  private overage(ctx: OperationContext, a: ActiveQuota, before: number, units: number, at: number): void {
    const over = Math.max(0, before + units - a.rec.limit) - Math.max(0, before - a.rec.limit);
    if (over <= 0 || ctx.services.usage === undefined) return;
    ctx.services.usage.record({
      tenantId: a.rec.tenantId, projectId: a.rec.projectId, kind: `${a.rec.kind}.overage`, quantity: over,
      at: new Date(at).toISOString(), operationId: ctx.operationId, correlationId: ctx.inv.correlationId,
      dimensions: { quotaId: a.rec.id, ...a.rec.dimensions },
    });
  }

  /** `GET …/summary`: each quota with its usage in the current window. */
  async summary(projectId: string): Promise<QuotaSummaryRow[]> {
    const list = await this.active(projectId);
    const now = Date.now();
    const out: QuotaSummaryRow[] = [];
    for (const a of list) {
      // Kinds not counted in dispatch (realtime, webhooks) are read from the durable usage events.
      let used = ENFORCED_KINDS.has(a.rec.kind) ? a.counter.used(now) : sum(await this.loadInitial(a.rec, a.window, now));
      // Cluster mode: the owner's count (persisted at each lease exchange) covers the other nodes too.
      if (a.budget !== null) used = Math.max(used, a.budget.usedEstimate(), sum(await this.loadInitial(a.rec, a.window, now)));
      out.push({ quotaId: a.rec.id, kind: a.rec.kind, mode: a.rec.mode, limit: a.rec.limit, used });
    }
    return out;
  }

  /** A quota of the project was created, changed or deleted: the next request reloads them. */
  invalidate(projectId: string): void {
    this.projects.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
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
    const recs = (await listQuotas(this.db, projectId)).filter((r) => r.state === 'active');
    const now = Date.now();
    const keep = new Set(recs.map((r) => r.id));
    for (const [id, c] of this.counters) if (c.projectId === projectId && !keep.has(id)) this.counters.delete(id);
    const out: ActiveQuota[] = [];
    for (const rec of recs) {
      const window = parseWindow(rec.window);
      if (window === null) continue; // not writable through the routes; skipped rather than failing every request
      const signature = counterSignature(rec);
      let counter = this.counters.get(rec.id);
      if (counter === undefined || counter.signature !== signature) {
        counter = new QuotaCounter(rec.id, projectId, signature, window, ENFORCED_KINDS.has(rec.kind) ? await this.loadInitial(rec, window, now) : new Map());
        this.counters.set(rec.id, counter);
      }
      out.push({ rec, window, counter, budget: this.budgetOf(rec, signature) });
    }
    return out;
  }

  private budgetOf(rec: QuotaRecord, signature: string): LeasedBudget | null {
    if (this.leases === null || !holds(rec.mode) || !CALENDAR_WINDOWS.has(rec.window)) return null;
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
    return this.eventsTable.then((withEvents) => loadBuckets(this.db, rec, window.liveFrom(now), (t) => window.bucketStart(t), withEvents));
  }

  /** Writes the counters changed since the last flush in one statement (every second, and at shutdown). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const rows: BucketUsage[] = [];
      const by = new Map<string, QuotaCounter>();
      for (const c of this.counters.values()) {
        const d = c.takeDirty();
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
    await this.flush();
  }
}

const sum = (m: Map<number, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
