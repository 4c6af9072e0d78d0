import type { QuotaWindow } from './catalog.js';
import type { BucketUsage } from './counter-store.js';

/**
 * One quota's exact in-process count: usage per window bucket (ascending),
 * a running total of the live buckets, and units held by operations in
 * flight (hard and reservation modes). Everything here is synchronous:
 * a check or an increment costs a few map operations, never I/O.
 */
export class QuotaCounter {
  private readonly buckets = new Map<number, number>();
  private total = 0;
  /** Units reserved by operations admitted but not finished yet. */
  pending = 0;
  private readonly dirty = new Set<number>();
  /** Buckets that left the window before they were persisted. */
  private retired: BucketUsage[] = [];

  constructor(readonly quotaId: string, readonly projectId: string, readonly signature: string, readonly window: QuotaWindow, initial: Map<number, number>) {
    for (const b of [...initial.keys()].sort((x, y) => x - y)) {
      const n = initial.get(b)!;
      this.buckets.set(b, n);
      this.total += n;
    }
  }

  /** Usage counted in the window at `now` (without in-flight reservations). */
  used(now: number): number {
    const from = this.window.liveFrom(now);
    for (const [b, n] of this.buckets) {
      if (b >= from) break;
      this.total -= n;
      this.buckets.delete(b);
      if (this.dirty.delete(b)) this.retired.push({ quotaId: this.quotaId, windowStart: b, used: n });
    }
    return this.total;
  }

  add(now: number, units: number): void {
    if (units <= 0) return;
    const b = this.window.bucketStart(now);
    this.buckets.set(b, (this.buckets.get(b) ?? 0) + units);
    this.total += units;
    this.dirty.add(b);
  }

  /**
   * Raises each bucket to at least what `durable` holds for it (cluster
   * mode: the usage every node wrote, runtime/quota/ledger.ts `syncUnleased`).
   * Never lowers a bucket: this node's own units may not be written yet.
   */
  raiseTo(durable: ReadonlyMap<number, number>): void {
    let inserted = false;
    for (const [b, n] of durable) {
      const mine = this.buckets.get(b);
      if (mine !== undefined && mine >= n) continue;
      if (mine === undefined) inserted = true;
      this.buckets.set(b, n);
      this.total += n - (mine ?? 0);
    }
    if (!inserted) return;
    // used() walks buckets oldest first: keep the map in ascending order.
    const sorted = [...this.buckets.entries()].sort((x, y) => x[0] - y[0]);
    this.buckets.clear();
    for (const [b, n] of sorted) this.buckets.set(b, n);
  }

  /** The buckets changed since the last call, with their current values (for the batched write). */
  takeDirty(): BucketUsage[] {
    const out = this.retired;
    this.retired = [];
    for (const b of this.dirty) out.push({ quotaId: this.quotaId, windowStart: b, used: this.buckets.get(b) ?? 0 });
    this.dirty.clear();
    return out;
  }

  /** A write failed: mark its buckets again so the next flush retries them. */
  restore(rows: readonly BucketUsage[]): void {
    for (const r of rows) {
      if (this.buckets.has(r.windowStart)) this.dirty.add(r.windowStart);
      else this.retired.push(r);
    }
  }
}
