import type { SqlExecutor } from '../../storage/index.js';
import { ServiceError } from '../errors/service-error.js';
import type { EventEnvelope } from '../events/event-store.js';
import type { EventTailSource, TailScope } from '../events/event-tail.js';
import type { Logger } from '../log.js';

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
}

/** Publishes one message to every recipient that joined a topic (uWS `app.publish`). */
export interface TopicPublisher {
  publish(topic: string, message: string): void;
}

/** Subscriptions held by the other nodes of a cluster, for the per-project quota. */
export interface PeerUsage {
  /** Subscriptions the other live nodes hold for the project (as last announced). */
  othersOf(projectId: string): number;
  /** This node's count for the project changed (the peers are told, debounced). */
  changed(projectId: string, count: number): void;
  close(): void;
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
}

interface Follower {
  /** Channels by `entity \0 branch`, then by channel key. */
  readonly channels: Map<string, Map<string, Channel>>;
  /** Attached subscriptions plus those waiting for `ready`: the follower stops at zero. */
  size: number;
  stop: (() => void) | null;
  ready: Promise<void>;
  chain: Promise<void>;
  position: string | null;
}

export interface RealtimeHubOptions {
  db: SqlExecutor;
  log: Logger;
  tail: EventTailSource;
  /** Subscriptions per project (cluster-wide when `peers` is set). Default 1000 (REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT). */
  maxSubscriptionsPerProject?: number;
  /** Cluster mode: the other nodes' counts, so the quota is per project, not per node. */
  peers?: PeerUsage;
}

export const QUOTA_KIND = 'realtime.subscriptions.concurrent';
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_PROJECT = 1000;

const groupKey = (entity: string, branch: string): string => `${entity}\u0000${branch}`;

/**
 * Realtime fan-out on one node. Subscriptions are kept in memory by
 * project; each project with subscriptions has ONE follower of its committed
 * event log (the node's EventTailSource: the SQL log embedded, JetStream in
 * cluster mode), so a write on any node reaches subscribers on every node.
 *
 * For each `entity.<E>.<kind>` event the channels of E on that branch are
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
  private publisher: TopicPublisher | null = null;
  private nextTopic = 1;
  private closed = false;

  constructor(private readonly opts: RealtimeHubOptions) {
    this.limit = opts.maxSubscriptionsPerProject ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_PROJECT;
  }

  /** The WebSocket adapter's broadcast: recipients with `join` are published to through it. */
  usePublisher(publisher: TopicPublisher): void {
    this.publisher = publisher;
  }

  /** Subscriptions (and reserved slots) of a project: this node's, plus the peers' in cluster mode. */
  usedBy(projectId: string): number {
    return this.localUsedBy(projectId) + (this.opts.peers?.othersOf(projectId) ?? 0);
  }

  /** This node's subscriptions (and reserved slots) of a project. */
  localUsedBy(projectId: string): number {
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

  /** Takes a slot (synchronously, so concurrent subscribes on this node cannot overshoot); 429 when none is free. */
  reserve(projectId: string): void {
    this.checkQuota(projectId);
    this.setUsed(projectId, this.localUsedBy(projectId) + 1);
  }

  /** Gives back a slot taken by reserve() that was never attached (or after detach). */
  release(projectId: string): void {
    this.setUsed(projectId, Math.max(0, this.localUsedBy(projectId) - 1));
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
      this.release(prepared.projectId);
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
    this.opts.peers?.close();
  }

  private setUsed(projectId: string, n: number): void {
    if (n === 0) this.used.delete(projectId);
    else this.used.set(projectId, n);
    this.opts.peers?.changed(projectId, n);
  }

  private channel(f: Follower, p: PreparedSubscription, id: string): Channel {
    const gk = groupKey(p.entity, p.branch);
    let group = f.channels.get(gk);
    if (group === undefined) f.channels.set(gk, (group = new Map()));
    const key = `${p.check?.key ?? ''}\u0000${id}`;
    let c = group.get(key);
    if (c === undefined) {
      c = { key, check: p.check, idJson: JSON.stringify(id), topic: `rt/${p.projectId}/${this.nextTopic++}`, direct: new Set(), joined: 0 };
      group.set(key, c);
    }
    return c;
  }

  private follower(p: PreparedSubscription): Follower {
    const existing = this.followers.get(p.projectId);
    if (existing !== undefined) return existing;
    const f: Follower = { channels: new Map(), size: 0, stop: null, ready: Promise.resolve(), chain: Promise.resolve(), position: null };
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
    const group = f.channels.get(groupKey(entity, typeof data.branch === 'string' ? data.branch : 'main'));
    if (group === undefined) return;
    const matched = kind === 'deleted' ? null : await this.rowChecks(group, data.entityId);
    // Encoded once per event; each channel gets the shared bytes behind its own subscription id.
    const tail = JSON.stringify({
      kind, entity, entityId: data.entityId, changedFields: Array.isArray(data.changedFields) ? data.changedFields : [],
      eventId: e.id, occurredAt: e.occurredAt, correlationId: e.correlationId, publicationVersion: e.publicationVersion,
    }).slice(1);
    for (const c of group.values()) {
      if (c.check !== null && matched !== null && matched.get(c.check.key) !== true) continue;
      const message = `{"type":"change","subscriptionId":${c.idJson},${tail}`;
      if (c.joined > 0) this.publisher?.publish(c.topic, message);
      for (const r of c.direct) r.send(message);
    }
  }

  /** Runs each distinct filter of the group once against the row (concurrently: a pool runs them in parallel). */
  private async rowChecks(group: Map<string, Channel>, entityId: string): Promise<Map<string, boolean>> {
    const checks = new Map<string, RowCheck>();
    for (const c of group.values()) if (c.check !== null) checks.set(c.check.key, c.check);
    const matched = new Map<string, boolean>();
    if (checks.size === 0) return matched;
    await Promise.all([...checks.values()].map(async (check) => {
      const values = check.values.slice();
      values[0] = entityId;
      try {
        const r = await this.opts.db.query(check.text, values);
        matched.set(check.key, r.rows.length > 0);
      } catch (err) {
        // A filter that no longer compiles against the table (schema changed) matches nothing.
        matched.set(check.key, false);
        this.opts.log.warn('realtime row check failed', { error: err instanceof Error ? err.message : String(err) });
      }
    }));
    return matched;
  }
}
