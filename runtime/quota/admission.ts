import type { Result } from '../operations/result.js';
import type { UsageSink } from '../usage/sink.js';
import { quotaExceeded } from './exceeded.js';
import type { QuotaWindow } from './catalog.js';
import type { QuotaCounter } from './counter.js';
import type { LeasedBudget } from './leased-budget.js';
import { recordOverage } from './overage.js';
import type { QuotaRecord } from './store.js';
import { actualUnits, type Metered } from './units.js';

/**
 * Admission against a project's active quotas (the ledger, ledger.ts, keeps
 * them loaded and counted): whether an operation fits, the hold it takes
 * while it runs, its settlement, and soft quotas' overage.
 */

/** An admitted operation's claim on its quotas: settled after it ran, released if it failed. */
export interface QuotaHold {
  settle(result: Result): void;
  /** Settles with a known count (work that is not a dispatched operation: a webhook attempt). */
  settleUnits(units: number): void;
  release(): void;
}

/**
 * A project's quotas of a concurrency kind (catalog.ts CONCURRENT_KINDS): the
 * bound the hub enforces (the lowest hard or reservation limit; null: the
 * node's default applies) and the soft quotas whose excess becomes overage.
 */
export interface ConcurrencyQuotas {
  enforced: QuotaRecord | null;
  soft: readonly QuotaRecord[];
}

export const NO_CONCURRENCY_QUOTAS: ConcurrencyQuotas = { enforced: null, soft: [] };

/** Who did the work an overage event is charged to. */
export interface WorkRef { operationId: string; correlationId: string }

export interface ActiveQuota {
  rec: QuotaRecord;
  window: QuotaWindow;
  counter: QuotaCounter;
  /** Cluster mode, hard and reservation quotas over a calendar window: this node's budget lease; null: the local counter decides. */
  budget: LeasedBudget | null;
}

/** Where soft quotas' `<kind>.overage` events go, looked up when one is recorded. */
export type UsageOf = () => UsageSink | undefined;

/** hard and reservation refuse what does not fit, and hold an operation's units while it runs. */
export const holds = (mode: string): boolean => mode === 'hard' || mode === 'reservation';

/** A quota applies to an operation when each of its dimensions equals the operation's (`entity` or `eventType`). */
const applies = (q: QuotaRecord, m: Metered): boolean => {
  if (q.kind !== m.kind) return false;
  for (const k in q.dimensions) {
    const mine = k === 'entity' ? m.entity : k === 'eventType' ? m.eventType : undefined;
    if (mine === undefined || q.dimensions[k] !== mine) return false;
  }
  return true;
};

/** Null when no quota applies; throws the hard answer when the operation does not fit; otherwise its hold. */
export function decide(work: WorkRef, m: Metered, list: ActiveQuota[], usage: UsageOf): QuotaHold | null | Promise<QuotaHold | null> {
  if (list.length === 0) return null;
  const mine = list.filter((a) => applies(a.rec, m));
  if (mine.length === 0) return null;
  const short = check(mine, m, Date.now(), false);
  if (short.length === 0) return hold(work, m, mine, usage);
  return topUp(work, m, mine, short, usage);
}

/**
 * Cluster mode, a lease ran short: ask the owner (requests waiting at once
 * share one exchange), check again, and ask once more if this request's
 * demand missed that exchange; then the same check decides.
 */
async function topUp(work: WorkRef, m: Metered, mine: ActiveQuota[], short: LeasedBudget[], usage: UsageOf): Promise<QuotaHold> {
  for (let attempt = 0; ; attempt++) {
    await Promise.all(short.map((b) => b.refill(m.estimate)));
    short = check(mine, m, Date.now(), attempt === 1);
    if (short.length === 0) return hold(work, m, mine, usage);
  }
}

/** Throws the hard answer for what does not fit; returns the leases to top up first (only when not `final`). */
function check(mine: ActiveQuota[], m: Metered, now: number, final: boolean): LeasedBudget[] {
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

function hold(work: WorkRef, m: Metered, mine: ActiveQuota[], usage: UsageOf): QuotaHold {
  for (const a of mine) {
    if (!holds(a.rec.mode)) continue;
    if (a.budget !== null) a.budget.pending += m.estimate;
    else a.counter.pending += m.estimate;
  }
  let done = false;
  const settleUnits = (units: number): void => {
      if (done) return;
      done = true;
      const at = Date.now();
      for (const a of mine) {
        if (holds(a.rec.mode)) {
          if (a.budget !== null) a.budget.settle(m.estimate, units);
          else a.counter.pending -= m.estimate;
        }
        const before = a.counter.used(at);
        a.counter.add(at, units);
        if (a.rec.mode === 'soft') overage(work, a, before, units, at, usage);
      }
  };
  return {
    settle: (result) => settleUnits(actualUnits(m, result)),
    settleUnits,
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
function overage(work: WorkRef, a: ActiveQuota, before: number, units: number, at: number, usage: UsageOf): void {
  const over = Math.max(0, before + units - a.rec.limit) - Math.max(0, before - a.rec.limit);
  if (over > 0) recordOverage(usage(), a.rec, over, work, at);
}

/** The strictest hard or reservation quota of a concurrency kind, and its soft quotas. */
export function concurrencyOf(list: readonly ActiveQuota[], kind: string): ConcurrencyQuotas {
  let enforced: QuotaRecord | null = null;
  const soft: QuotaRecord[] = [];
  for (const a of list) {
    if (a.rec.kind !== kind) continue;
    if (holds(a.rec.mode)) {
      if (enforced === null || a.rec.limit < enforced.limit) enforced = a.rec;
    } else if (a.rec.mode === 'soft') soft.push(a.rec);
  }
  return enforced === null && soft.length === 0 ? NO_CONCURRENCY_QUOTAS : { enforced, soft };
}
