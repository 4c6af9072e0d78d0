import type { SqlExecutor } from '../../storage/index.js';
import type { ServiceError } from '../errors/service-error.js';
import type { EventEnvelope } from '../events/event-store.js';
import type { EventTailSource, TailScope } from '../events/event-tail.js';
import type { Logger } from '../log.js';
import { CheckSlots } from './check-slots.js';
import { evaluateChecks, type Matches, type RowCheck } from './filter-batch.js';
import { changeOf, groupKey, tailOf, visibleTo, type Change, type ChangeNotice } from './changes.js';
import type { StreamSlots } from '../streams/stream-slots.js';
import { DEFAULT_REALTIME_LIMITS, SubscriptionLimits, type PeerUsage, type RealtimeLimits } from './subscription-limits.js';
import type { ConcurrencyQuotas } from '../quota/ledger.js';

export type { RowCheck } from './filter-batch.js';
export type { PeerUsage, RealtimeLimits } from './subscription-limits.js';
export { QUOTA_KIND } from './subscription-limits.js';
export type { ChangeNotice } from './changes.js';

/** Where change messages go: one WebSocket connection or one SSE stream. */
export interface RealtimeRecipient {
  /** Sends one encoded message; the recipient applies its own backpressure bound (and drops itself past it). */
  send(message: string): void;
  /**
   * Broadcast membership (uWS WebSockets). A recipient that can join a topic
   * is not sent to one by one: the hub publishes each message once per
   * topic, and uWS copies it to every member natively, coalescing one loop
   * iteration's messages into one write per socket.
   */
  join?(topic: string): void;
  leave?(topic: string): void;
  /**
   * Receives changes as values instead of encoded realtime messages: a
   * GraphQL subscription completes each against its own selection. Such a
   * recipient is never sent `send` messages by the hub.
   */
  notify?(change: ChangeNotice): void;
}

/** Publishes one message to every recipient that joined a topic (uWS `app.publish`). */
export interface TopicPublisher {
  publish(topic: string, message: string): void;
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
  /** The actor's label (`user:<subject>`), counted against the per-actor bound; null for the platform admin. */
  actor: string | null;
  /** The compiled filter; null when unfiltered. */
  check: RowCheck | null;
  /**
   * Set when the subscriber reads under a row policy (its read policy is
   * part of `check`): `masked` fields are removed from `changedFields`, and
   * `deleted` changes are not delivered (the row is gone, so the policy
   * cannot be checked against it; fail closed).
   */
  policy?: { masked: readonly string[] };
}

/**
 * Subscriptions that receive byte-identical messages: same entity, branch,
 * row check and subscription id. Clients that let the server number their
 * subscriptions (`s1`, …) or pick the same id share a channel, so one event
 * costs one publish per channel, not one send per subscriber.
 */
interface Channel {
  readonly key: string;
  readonly check: RowCheck | null;
  /** The subscription id, already JSON-encoded (spliced into the shared message). */
  readonly idJson: string;
  readonly topic: string;
  /** Recipients that cannot join a topic (SSE streams): sent to one by one. */
  readonly direct: Set<RealtimeRecipient>;
  /** Recipients that joined `topic`. */
  joined: number;
  readonly policy: { masked: readonly string[] } | null;
}

interface Follower {
  /** Channels by `entity \0 branch`, then by channel key. */
  readonly channels: Map<string, Map<string, Channel>>;
  /** Attached subscriptions plus those waiting for `ready`: the follower stops at zero. */
  size: number;
  stop: (() => void) | null;
  ready: Promise<void>;
  /** Entity events waiting for delivery, in log order; drained in batches by one loop. */
  queue: EventEnvelope[];
  draining: boolean;
  position: string | null;
}

export interface RealtimeHubOptions {
  db: SqlExecutor;
  log: Logger;
  tail: EventTailSource;
  /** Subscription bounds (REALTIME_MAX_*); defaults: DEFAULT_REALTIME_LIMITS. */
  limits?: Partial<RealtimeLimits>;
  /** Filter queries in flight on this node, all projects together (REALTIME_FILTER_CHECK_CONCURRENCY). Default 2. */
  filterCheckConcurrency?: number;
  /** Cluster mode: the other nodes' counts, so the quota is per project, not per node. */
  peers?: PeerUsage;
  /** The node's long-lived stream slots (per actor, per node), shared with gRPC streams and the tails. Default: its own. */
  streams?: StreamSlots;
}

/** Events delivered per batch: their rows are checked together (one id array per query). */
const MAX_EVENTS_PER_BATCH = 500;

/**
 * Realtime fan-out on one node. Subscriptions are kept in memory by
 * project; each project with subscriptions has ONE follower of its committed
 * event log (the node's EventTailSource: the SQL log embedded, JetStream in
 * cluster mode), so a write on any node reaches subscribers on every node.
 *
 * Events are queued per project and delivered in batches, in log order.
 * For a batch, the distinct filters of each entity are evaluated together
 * over the batch's changed rows: one SELECT per 100 filters with one boolean
 * column per filter (runtime/realtime/filter-batch.ts), not one query per
 * filter per event. A project runs one such query at a time, and the node
 * at most `filterCheckConcurrency` (FIFO), so one tenant's filters cannot
 * take the shared DB pool from the others. The check runs server-side on
 * the CURRENT row, so a subscriber never learns of rows outside its filter.
 * Deletes go to every subscriber of the entity (the row is gone, so the
 * filter cannot be evaluated; each holds `entity:<E>:read`).
 */
export class RealtimeHub {
  readonly limits: SubscriptionLimits;
  private readonly slots: CheckSlots;
  private readonly followers = new Map<string, Follower>();
  private publisher: TopicPublisher | null = null;
  private nextTopic = 1;
  private closed = false;

  constructor(private readonly opts: RealtimeHubOptions) {
    this.limits = new SubscriptionLimits({ ...DEFAULT_REALTIME_LIMITS, ...opts.limits }, opts.peers, opts.streams);
    this.slots = new CheckSlots(opts.filterCheckConcurrency ?? 2);
  }

  /** The WebSocket adapter's broadcast: recipients with `join` are published to through it. */
  usePublisher(publisher: TopicPublisher): void {
    this.publisher = publisher;
  }

  /** Subscriptions (and reserved slots) of a project: this node's, plus the peers' in cluster mode. */
  usedBy(projectId: string): number {
    return this.limits.usedBy(projectId);
  }

  /** This node's subscriptions (and reserved slots) of a project. */
  localUsedBy(projectId: string): number {
    return this.limits.localUsedBy(projectId);
  }

  /** Throws 429 when the actor (null: the platform admin) or the project has no free slot (handshake check). */
  checkQuota(projectId: string, actor: string | null, quotas?: ConcurrencyQuotas): void {
    this.limits.check(projectId, actor, quotas);
  }

  /** 429 for a WebSocket connection already holding `used` subscriptions (in flight included), else null. */
  connectionFull(used: number): ServiceError | null {
    return this.limits.connectionFull(used);
  }

  /** Takes a slot (synchronously, so concurrent subscribes on this node cannot overshoot); 429 when none is free. */
  reserve(p: PreparedSubscription, quotas?: ConcurrencyQuotas): number {
    return this.limits.reserve(holder(p), quotas);
  }

  /** Gives back a slot taken by reserve() that was never attached (or after detach). */
  release(p: PreparedSubscription): void {
    this.limits.release(holder(p));
  }

  /**
   * Attaches a prepared subscription (its slot is already reserved) once the
   * project's follower is positioned: events committed after this resolves
   * are delivered, none before. Returns the detach function (which releases
   * the slot).
   */
  async attach(prepared: PreparedSubscription, id: string, recipient: RealtimeRecipient): Promise<() => void> {
    const f = this.follower(prepared);
    f.size++;
    const releaseFollower = (): void => {
      f.size--;
      this.release(prepared);
      if (f.size === 0 && this.followers.get(prepared.projectId) === f) {
        this.followers.delete(prepared.projectId);
        f.stop?.();
        f.stop = null;
      }
    };
    try {
      await f.ready;
    } catch (err) {
      releaseFollower();
      throw err;
    }
    // Joined only now, so nothing committed before the follower's position reaches it.
    const channel = this.channel(f, prepared, id);
    const viaTopic = recipient.join !== undefined && this.publisher !== null;
    if (viaTopic) {
      recipient.join!(channel.topic);
      channel.joined++;
    } else channel.direct.add(recipient);
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      if (viaTopic) {
        recipient.leave?.(channel.topic);
        channel.joined--;
      } else channel.direct.delete(recipient);
      if (channel.joined === 0 && channel.direct.size === 0) {
        const group = f.channels.get(groupKey(prepared.entity, prepared.branch));
        group?.delete(channel.key);
        if (group?.size === 0) f.channels.delete(groupKey(prepared.entity, prepared.branch));
      }
      releaseFollower();
    };
  }

  /** Stops every follower (node shutdown). */
  close(): void {
    this.closed = true;
    for (const f of this.followers.values()) f.stop?.();
    this.followers.clear();
    this.limits.close();
  }

  private channel(f: Follower, p: PreparedSubscription, id: string): Channel {
    const gk = groupKey(p.entity, p.branch);
    let group = f.channels.get(gk);
    if (group === undefined) f.channels.set(gk, (group = new Map()));
    const key = `${p.check?.key ?? ''}\u0000${id}${p.policy === undefined ? '' : `\u0000policy:${p.policy.masked.join(',')}`}`;
    let c = group.get(key);
    if (c === undefined) {
      c = { key, check: p.check, idJson: JSON.stringify(id), topic: `rt/${p.projectId}/${this.nextTopic++}`, direct: new Set(), joined: 0, policy: p.policy ?? null };
      group.set(key, c);
    }
    return c;
  }

  private follower(p: PreparedSubscription): Follower {
    const existing = this.followers.get(p.projectId);
    if (existing !== undefined) return existing;
    const f: Follower = { channels: new Map(), size: 0, stop: null, ready: Promise.resolve(), queue: [], draining: false, position: null };
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
        f.queue.push(e);
        if (!f.draining) void this.drain(f, scope.projectId);
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

  /** Delivers queued events in batches, one batch at a time (so a project runs one filter query at a time). */
  private async drain(f: Follower, projectId: string): Promise<void> {
    f.draining = true;
    try {
      while (f.queue.length > 0 && !this.closed && this.followers.get(projectId) === f) {
        const batch = f.queue.splice(0, MAX_EVENTS_PER_BATCH);
        try {
          await this.deliverBatch(f, batch);
        } catch (err) {
          this.opts.log.warn('realtime delivery failed', { projectId, events: batch.length, error: err instanceof Error ? err.message : String(err) });
        }
      }
    } finally {
      f.draining = false;
    }
  }

  private async deliverBatch(f: Follower, batch: EventEnvelope[]): Promise<void> {
    const changes: Change[] = [];
    for (const e of batch) {
      const c = changeOf(e);
      if (c !== null) changes.push(c);
    }
    // Rows to check, per entity group with filtered channels (deletes are not checked).
    const rows = new Map<string, Set<string>>();
    for (const c of changes) {
      if (c.notice.kind === 'deleted' || !f.channels.has(c.group)) continue;
      let ids = rows.get(c.group);
      if (ids === undefined) rows.set(c.group, (ids = new Set()));
      ids.add(c.notice.entityId);
    }
    const matched = new Map<string, Matches>();
    for (const [gk, ids] of rows) {
      const group = f.channels.get(gk);
      if (group !== undefined) matched.set(gk, await this.rowChecks(group, ids));
    }
    for (const c of changes) {
      const group = f.channels.get(c.group);
      if (group === undefined) continue;
      const m = matched.get(c.group);
      // Encoded once per event; each channel gets the shared bytes behind its own subscription id.
      const n = c.notice;
      const tail = tailOf(n);
      const id = n.entityId.toLowerCase();
      for (const ch of group.values()) {
        // A channel whose filter was not evaluated (it joined during the checks) gets nothing of this batch.
        if (ch.check !== null && n.kind !== 'deleted' && m?.get(ch.check.key)?.has(id) !== true) continue;
        if (ch.policy !== null && n.kind === 'deleted') continue;
        const seen = ch.policy === null ? n : visibleTo(n, ch.policy.masked);
        const message = `{"type":"change","subscriptionId":${ch.idJson},${seen === n ? tail : tailOf(seen)}`;
        if (ch.joined > 0) this.publisher?.publish(ch.topic, message);
        for (const r of ch.direct) {
          if (r.notify !== undefined) r.notify(seen);
          else r.send(message);
        }
      }
    }
  }

  /** Evaluates every distinct filter of the group over the rows, in bounded batched queries. */
  private rowChecks(group: Map<string, Channel>, ids: Set<string>): Promise<Matches> {
    const checks = new Map<string, RowCheck>();
    for (const c of group.values()) if (c.check !== null) checks.set(c.check.key, c.check);
    return evaluateChecks(
      (text, values) => this.slots.run(() => this.opts.db.query(text, values)),
      [...checks.values()], ids,
      // A filter that no longer compiles against the table (schema changed) matches nothing.
      (err) => this.opts.log.warn('realtime row check failed', { error: err instanceof Error ? err.message : String(err) }),
    );
  }
}

const holder = (p: PreparedSubscription) => ({ projectId: p.projectId, actor: p.actor, filterKey: p.check?.key ?? null });
