import type { SqlExecutor } from '../../storage/index.js';
import { ServiceError } from '../errors/service-error.js';
import type { EventEnvelope } from '../events/event-store.js';
import type { EventTailSource, TailScope } from '../events/event-tail.js';
import type { Logger } from '../log.js';

/** Where change messages go: one WebSocket connection or one SSE stream. */
export interface RealtimeRecipient {
  /** Sends one encoded message; the recipient applies its own backpressure bound (and drops itself past it). */
  send(message: string): void;
}

/**
 * A subscription validated by `Realtime.Subscribe` (auth, scope, grants,
 * filter, quota slot reserved) and not yet attached to a recipient.
 */
export interface PreparedSubscription {
  tenantId: string;
  projectId: string;
  branch: string;
  entity: string;
  /** Row check for a filtered subscription: `$1` is the row id; null when unfiltered. */
  check: RowCheck | null;
}

export interface RowCheck {
  /** Same text and values ⇒ same key: subscribers sharing a filter share one query per event. */
  key: string;
  text: string;
  /** Parameters; index 0 is replaced by the row id. */
  values: unknown[];
}

interface Subscription {
  readonly prepared: PreparedSubscription;
  /** The subscription id, already JSON-encoded (spliced into the shared message). */
  readonly idJson: string;
  readonly recipient: RealtimeRecipient;
}

interface Follower {
  subs: Set<Subscription>;
  stop: (() => void) | null;
  ready: Promise<void>;
  chain: Promise<void>;
  position: string | null;
}

export interface RealtimeHubOptions {
  db: SqlExecutor;
  log: Logger;
  tail: EventTailSource;
  /** Subscriptions per project on this node. Default REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT or 1000. */
  maxSubscriptionsPerProject?: number;
}

export const QUOTA_KIND = 'realtime.subscriptions.concurrent';

function defaultLimit(): number {
  const n = Number(process.env.REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT ?? '');
  return Number.isSafeInteger(n) && n > 0 ? n : 1000;
}

/**
 * Realtime fan-out on one node. Subscriptions are kept in memory by
 * project; each project with subscriptions has ONE follower of its committed
 * event log (the node's EventTailSource: the SQL log embedded, JetStream in
 * cluster mode), so a write on any node reaches subscribers on every node.
 *
 * For each `entity.<E>.<kind>` event the subscribers of E on that branch are
 * checked: unfiltered ones get it; filtered ones get it when the CURRENT row
 * matches their filter (one `SELECT` per distinct filter per event, so the
 * check runs server-side and a subscriber never learns of rows outside its
 * filter). Deletes go to every subscriber of the entity (the row is gone,
 * so the filter cannot be evaluated; each holds `entity:<E>:read`).
 * Events are processed in log order per project.
 */
export class RealtimeHub {
  readonly limit: number;
  private readonly used = new Map<string, number>();
  private readonly followers = new Map<string, Follower>();
  private closed = false;

  constructor(private readonly opts: RealtimeHubOptions) {
    this.limit = opts.maxSubscriptionsPerProject ?? defaultLimit();
  }

  /** Subscriptions (and reserved slots) of a project on this node. */
  usedBy(projectId: string): number {
    return this.used.get(projectId) ?? 0;
  }

  quotaExceeded(projectId: string): ServiceError {
    const used = this.usedBy(projectId);
    return new ServiceError('QUOTA_EXCEEDED', 'Quota.RealtimeSubscriptions', `at most ${this.limit} realtime subscriptions per project`, {
      headers: { 'X-Service-Quota-Kind': QUOTA_KIND, 'X-Service-Quota-Limit': String(this.limit), 'X-Service-Quota-Used': String(used), 'X-Service-Quota-Reset': '0' },
    });
  }

  /** Throws 429 when the project has no free subscription slot (handshake check). */
  checkQuota(projectId: string): void {
    if (this.usedBy(projectId) >= this.limit) throw this.quotaExceeded(projectId);
  }

  /** Takes a slot (synchronously, so concurrent subscribes cannot overshoot); 429 when none is free. */
  reserve(projectId: string): void {
    this.checkQuota(projectId);
    this.used.set(projectId, this.usedBy(projectId) + 1);
  }

  /** Gives back a slot taken by reserve() that was never attached (or after detach). */
  release(projectId: string): void {
    const n = this.usedBy(projectId) - 1;
    if (n <= 0) this.used.delete(projectId);
    else this.used.set(projectId, n);
  }

  /**
   * Attaches a prepared subscription (its slot is already reserved) once the
   * project's follower is positioned: events committed after this resolves
   * are delivered. Returns the detach function (which releases the slot).
   */
  async attach(prepared: PreparedSubscription, id: string, recipient: RealtimeRecipient): Promise<() => void> {
    const sub: Subscription = { prepared, idJson: JSON.stringify(id), recipient };
    const f = this.follower(prepared);
    f.subs.add(sub);
    let attached = true;
    const detach = (): void => {
      if (!attached) return;
      attached = false;
      f.subs.delete(sub);
      this.release(prepared.projectId);
      if (f.subs.size === 0 && this.followers.get(prepared.projectId) === f) {
        this.followers.delete(prepared.projectId);
        f.stop?.();
        f.stop = null;
      }
    };
    try {
      await f.ready;
    } catch (err) {
      detach();
      throw err;
    }
    return detach;
  }

  /** Stops every follower (node shutdown). */
  close(): void {
    this.closed = true;
    for (const f of this.followers.values()) f.stop?.();
    this.followers.clear();
  }

  private follower(p: PreparedSubscription): Follower {
    const existing = this.followers.get(p.projectId);
    if (existing !== undefined) return existing;
    const f: Follower = { subs: new Set(), stop: null, ready: Promise.resolve(), chain: Promise.resolve(), position: null };
    const scope: TailScope = { tenantId: p.tenantId, projectId: p.projectId };
    f.ready = this.opts.tail.start(scope, null).then((position) => {
      f.position = position;
      if (this.followers.get(p.projectId) === f && !this.closed) this.follow(f, scope);
    });
    f.ready.catch(() => {
      if (this.followers.get(p.projectId) === f) this.followers.delete(p.projectId);
    });
    this.followers.set(p.projectId, f);
    return f;
  }

  private follow(f: Follower, scope: TailScope): void {
    f.stop = this.opts.tail.follow(scope, f.position!, {
      event: (position, e) => {
        f.position = position;
        if (!e.type.startsWith('entity.')) return;
        f.chain = f.chain.then(() => this.deliver(f, e)).catch((err) => {
          this.opts.log.warn('realtime delivery failed', { eventId: e.id, error: err instanceof Error ? err.message : String(err) });
        });
      },
      error: (err) => {
        this.opts.log.warn('realtime event follower failed; restarting', { projectId: scope.projectId, error: err instanceof Error ? err.message : String(err) });
        f.stop = null;
        const t = setTimeout(() => {
          if (this.followers.get(scope.projectId) === f && !this.closed && f.stop === null) this.follow(f, scope);
        }, 500);
        t.unref();
      },
    });
  }

  private async deliver(f: Follower, e: EventEnvelope): Promise<void> {
    const data = e.data as { entity?: unknown; entityId?: unknown; changedFields?: unknown; branch?: unknown };
    const entity = data.entity;
    const kind = e.type.slice(e.type.lastIndexOf('.') + 1);
    if (typeof entity !== 'string' || typeof data.entityId !== 'string') return;
    const branch = typeof data.branch === 'string' ? data.branch : 'main';
    const targets: Subscription[] = [];
    for (const s of f.subs) if (s.prepared.entity === entity && s.prepared.branch === branch) targets.push(s);
    if (targets.length === 0) return;
    // Encoded once per event; each recipient gets the shared bytes behind its own subscription id.
    const tail = JSON.stringify({
      kind, entity, entityId: data.entityId, changedFields: Array.isArray(data.changedFields) ? data.changedFields : [],
      eventId: e.id, occurredAt: e.occurredAt, correlationId: e.correlationId, publicationVersion: e.publicationVersion,
    }).slice(1);
    const matched = new Map<string, boolean>();
    for (const s of targets) {
      const check = s.prepared.check;
      if (check !== null && kind !== 'deleted' && !matched.has(check.key)) {
        const values = check.values.slice();
        values[0] = data.entityId;
        try {
          const r = await this.opts.db.query(check.text, values);
          matched.set(check.key, r.rows.length > 0);
        } catch (err) {
          // A filter that no longer compiles against the table (schema changed) matches nothing.
          matched.set(check.key, false);
          this.opts.log.warn('realtime row check failed', { error: err instanceof Error ? err.message : String(err) });
        }
      }
    }
    for (const s of targets) {
      if (!f.subs.has(s)) continue;
      const check = s.prepared.check;
      if (check !== null && kind !== 'deleted' && matched.get(check.key) !== true) continue;
      s.recipient.send(`{"type":"change","subscriptionId":${s.idJson},${tail}`);
    }
  }
}
