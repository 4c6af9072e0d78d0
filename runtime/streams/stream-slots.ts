import { ServiceError } from '../errors/service-error.js';
import type { Actor } from '../identity/actor.js';
import type { PageQueue } from './page-queue.js';

/**
 * Bounds on long-lived streams held open on one node (node/config.ts):
 * realtime subscriptions (WebSocket, SSE, graphql-ws, gRPC Watch), gRPC
 * StreamList, and the event and audit tails.
 */
export interface StreamLimits {
  /** Streams of one actor (user or API key) in one project on this node (REALTIME_MAX_SUBSCRIPTIONS_PER_ACTOR); the platform admin is not counted. */
  perActor: number;
  /** Streams of every actor and project together on this node (MAX_STREAMS_PER_NODE). */
  perNode: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { perActor: 200, perNode: 2000 };

/** What a stream is, for the refusal's reasonCode: a realtime subscription keeps realtime's names. */
export type StreamKind = 'subscription' | 'stream';

/** Whose slot it is. */
export interface StreamHolder {
  projectId: string;
  /** The actor's label (`user:<subject>`, `apikey:<id>`); null for the platform admin (not limited per actor). */
  actor: string | null;
}

/** The quota kind named in a refusal of a non-realtime stream (X-Service-Quota-Kind). */
export const STREAMS_QUOTA_KIND = 'streams.concurrent';
const REALTIME_QUOTA_KIND = 'realtime.subscriptions';

/**
 * The 429 QUOTA_EXCEEDED of a concurrency bound (gRPC: RESOURCE_EXHAUSTED;
 * graphql-ws: an `error` message). A slot frees as soon as a stream ends,
 * so it is retryable and its reset is now (an ISO 8601 instant, as the
 * spec's header is).
 */
export function concurrencyQuotaError(reasonCode: string, message: string, kind: string, limit: number, used: number): ServiceError {
  return new ServiceError('QUOTA_EXCEEDED', reasonCode, message, {
    retryable: true,
    headers: { 'X-Service-Quota-Kind': kind, 'X-Service-Quota-Limit': String(limit), 'X-Service-Quota-Used': String(used), 'X-Service-Quota-Reset': new Date().toISOString() },
  });
}

/** The actor a stream counts against: its label, or null for the platform admin (the operator's credential, which can change every limit anyway). */
export const streamActorOf = (actor: Actor): string | null => (actor.kind === 'admin' ? null : actor.label);

const actorKey = (projectId: string, actor: string): string => `${projectId}\u0000${actor}`;

/**
 * One count of the long-lived streams open on this node, per actor and in
 * all. Every such stream takes a slot before it costs anything (a query, a
 * follower, a buffer) and gives it back when it ends, however it ends. A
 * slot is taken synchronously, so a burst on this node cannot overshoot.
 */
export class StreamSlots {
  private openOnNode = 0;
  private readonly byActor = new Map<string, number>();

  constructor(readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS) {
    for (const [k, v] of Object.entries(limits)) {
      if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`stream limit ${k} must be a positive integer`);
    }
  }

  /** Streams open on this node. */
  get open(): number {
    return this.openOnNode;
  }

  actorUsed(projectId: string, actor: string): number {
    return this.byActor.get(actorKey(projectId, actor)) ?? 0;
  }

  /** 429 when the holder's actor or this node has no free slot; nothing taken. */
  check(h: StreamHolder, kind: StreamKind): void {
    if (h.actor !== null) {
      const n = this.actorUsed(h.projectId, h.actor);
      if (n >= this.limits.perActor) {
        throw kind === 'subscription'
          ? concurrencyQuotaError('Quota.RealtimeSubscriptionsPerActor', `at most ${this.limits.perActor} realtime subscriptions and streams per user in a project`, REALTIME_QUOTA_KIND, this.limits.perActor, n)
          : concurrencyQuotaError('Quota.StreamsPerActor', `at most ${this.limits.perActor} open streams and subscriptions per user in a project`, STREAMS_QUOTA_KIND, this.limits.perActor, n);
      }
    }
    if (this.openOnNode >= this.limits.perNode) {
      throw concurrencyQuotaError('Quota.StreamsPerNode', `this node holds its maximum of ${this.limits.perNode} open streams; retry later or on another node`, STREAMS_QUOTA_KIND, this.limits.perNode, this.openOnNode);
    }
  }

  /** Takes a slot (429 when none is free, nothing taken); give it back with release(). */
  reserve(h: StreamHolder, kind: StreamKind): void {
    this.check(h, kind);
    this.openOnNode++;
    if (h.actor !== null) this.byActor.set(actorKey(h.projectId, h.actor), this.actorUsed(h.projectId, h.actor) + 1);
  }

  release(h: StreamHolder): void {
    this.openOnNode = Math.max(0, this.openOnNode - 1);
    if (h.actor === null) return;
    const k = actorKey(h.projectId, h.actor);
    const n = (this.byActor.get(k) ?? 0) - 1;
    if (n > 0) this.byActor.set(k, n);
    else this.byActor.delete(k);
  }

  /** Takes a slot and answers its release, which gives it back once however often it is called. */
  take(h: StreamHolder, kind: StreamKind): () => void {
    this.reserve(h, kind);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.release(h);
    };
  }
}

/** What bounds the node's long-lived streams (Services.streams). */
export interface LongLivedStreams {
  /** Open streams, per actor and per node. */
  readonly slots: StreamSlots;
  /**
   * gRPC StreamList pages in flight on this node, FIFO (page-queue.ts):
   * however many streams are open, they hold at most a few pooled
   * connections at once, and on PGlite leave its thread free half of the time.
   */
  readonly pages: PageQueue;
}
