import type { SqlExecutor } from '../../storage/index.js';
import { parseWindow } from './catalog.js';
import { hasUsageEvents, loadBuckets, persistBuckets } from './counter-store.js';
import { counterSignature, readQuota } from './store.js';

/** A node's request to the owner: report what it consumed of its lease, and ask for a new one. */
export interface LeaseRequest {
  quotaId: string;
  nodeId: string;
  /** Units consumed since the node's last report (they become "used"). */
  consumed: number;
  /** Units wanted on top of the lease; 0 only renews and reports; -1 hands the lease back (shutdown). */
  want: number;
}

export interface LeaseReply {
  /** Units the node's lease holds after this exchange (what it reported is no longer in it). */
  units: number;
  /** Cluster-wide usage counted in the window, reports included. */
  used: number;
  limit: number;
  /** Start of the window the lease is for (ms). */
  windowStart: number;
  expiresAt: number;
}

interface Budget {
  signature: string;
  windowStart: number;
  used: number;
  leases: Map<string, { units: number; expiresAt: number }>;
}

/** How long a lease is good for: a node renews it every third of this; a dead node's lease comes back after it. */
export const LEASE_TTL_MS = 6_000;

/**
 * The Project actor's side of budget leases (docs/adr/0007-quota-budget-leases.md):
 * one activation in the cluster holds, per hard or reservation quota, the
 * usage reported by the nodes and the units leased out, and never leases
 * more than `limit − used − leased to others`. The count is persisted
 * (`quota_usage`) at each report: one write per lease exchange, not per request.
 */
export class BudgetOwner {
  private readonly budgets = new Map<string, Budget>();

  constructor(private readonly db: SqlExecutor, private readonly projectId: string) {}

  async lease(req: LeaseRequest, now = Date.now()): Promise<LeaseReply | null> {
    const q = await readQuota(this.db, this.projectId, req.quotaId);
    const window = q === null ? null : parseWindow(q.window);
    if (q === null || window === null) {
      this.budgets.delete(req.quotaId);
      return null;
    }
    const windowStart = window.bucketStart(now);
    const signature = counterSignature(q);
    let b = this.budgets.get(req.quotaId);
    if (b === undefined || b.windowStart !== windowStart || b.signature !== signature) {
      const initial = await loadBuckets(this.db, q, windowStart, (t) => window.bucketStart(t), await hasUsageEvents(this.db));
      b = { signature, windowStart, used: initial.get(windowStart) ?? 0, leases: new Map() };
      this.budgets.set(req.quotaId, b);
    }
    if (req.consumed > 0) {
      b.used += req.consumed;
      await persistBuckets(this.db, [{ quotaId: q.id, windowStart, used: b.used }]);
    }
    let leasedToOthers = 0;
    for (const [node, l] of b.leases) {
      if (l.expiresAt <= now) b.leases.delete(node); // a dead node's lease comes back
      else if (node !== req.nodeId) leasedToOthers += l.units;
    }
    const mine = b.leases.get(req.nodeId);
    const expiresAt = now + LEASE_TTL_MS;
    if (req.want < 0) {
      b.leases.delete(req.nodeId);
      return { units: 0, used: b.used, limit: q.limit, windowStart, expiresAt };
    }
    // What the node reported is no longer lent: it is used. A lowered limit shrinks the lease too.
    const room = Math.max(0, q.limit - b.used - leasedToOthers);
    const held = Math.min(room, Math.max(0, (mine?.units ?? 0) - req.consumed));
    const extra = Math.max(0, Math.min(req.want, room - held));
    b.leases.set(req.nodeId, { units: held + extra, expiresAt });
    return { units: held + extra, used: b.used, limit: q.limit, windowStart, expiresAt };
  }
}
