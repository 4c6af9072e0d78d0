import { DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, jetstream, type Consumer, type ConsumerMessages, type JetStreamClient, type JsMsg, type StreamConfig } from '@nats-io/jetstream';
import { retryJetStream } from './js-retry.js';
import { replicasFor, type ClusterConnection } from './nats-connection.js';

/**
 * What the log needs of an event: the envelope's identity and scope. The
 * runtime's EventEnvelope fits this shape; cluster/ does not import runtime/.
 */
export interface LogEvent {
  id: string;
  type: string;
  tenantId: string;
  projectId: string;
  data?: Record<string, unknown>;
}

export interface EventStreamOptions {
  /** Stream name. Default `PLINTH_EVENTS`. */
  stream?: string;
  /** EVENT_STREAM_MAX_AGE_HOURS → ms. 0 keeps events until maxBytes pushes them out. Default 7 days. */
  maxAgeMs?: number;
  /** EVENT_STREAM_MAX_BYTES. -1: no byte limit (JetStream reserves a positive value against the server's max_file_store). Default -1. */
  maxBytes?: number;
  /** EVENT_DEDUPE_WINDOW_S → ms. A republished event id inside it is dropped by JetStream. Default 2 min. */
  duplicateWindowMs?: number;
  /** How long one publish keeps retrying through a leader election before the batch fails (and is retried by the next drain). Default 15 s. */
  publishDeadlineMs?: number;
  /** Replica count; default replicasFor(conn) (3 on a 3+ server cluster). */
  replicas?: number;
}

/**
 * One attempt at creating an ordered (R1, in-memory) consumer. The meta
 * leader may place it on a server that died moments ago and has not been
 * noticed yet (nats-server 2.9): that request never gets an answer, while a
 * retry is placed anew. Short attempts (rather than the connection's 5 s)
 * fit several placements into the retry deadline.
 */
const CONSUMER_CREATE_TIMEOUT_MS = 2_000;

export const EVENT_STREAM_DEFAULTS = {
  stream: 'PLINTH_EVENTS',
  /** 7 days: consumers that fall behind (webhook dispatcher, a tail resuming) can catch up after a long outage. */
  maxAgeMs: 7 * 24 * 3_600_000,
  maxBytes: -1,
  /** 2 min: far longer than a drain retry (500 ms sweep) or an outbox-actor failover (lease TTL, seconds). */
  duplicateWindowMs: 120_000,
  publishDeadlineMs: 15_000,
} as const;

/** Root token of every event subject. */
export const EVENT_SUBJECT_ROOT = 'evt';

const ms2ns = (ms: number): number => ms * 1_000_000;

/** One NATS subject token: no `.`, wildcards or whitespace; never empty. */
export function subjectToken(text: string | null | undefined): string {
  if (text === null || text === undefined || text === '') return '_';
  const t = text.replace(/[^A-Za-z0-9_-]/g, '_');
  return t.length > 64 ? t.slice(0, 64) : t;
}

/** `evt.<tenant>.<project>.<entity or _>.<kind>`; kind is the last segment of the type (`entity.Order.created` → `created`). */
export function eventSubject(e: LogEvent): string {
  const entity = typeof e.data?.entity === 'string' ? e.data.entity : null;
  const dot = e.type.lastIndexOf('.');
  const kind = dot < 0 ? e.type : e.type.slice(dot + 1);
  return `${EVENT_SUBJECT_ROOT}.${subjectToken(e.tenantId)}.${subjectToken(e.projectId)}.${subjectToken(entity)}.${subjectToken(kind)}`;
}

/** Every event of one project: `evt.<tenant>.<project>.>`. */
export const projectFilter = (tenantId: string, projectId: string): string =>
  `${EVENT_SUBJECT_ROOT}.${subjectToken(tenantId)}.${subjectToken(projectId)}.>`;

export interface StoredEvent {
  /** Stream sequence: a position any node can resume from. */
  seq: number;
  /** Nats-Msg-Id: the event id the publisher deduplicated on. */
  msgId: string | null;
  subject: string;
  event: LogEvent;
}

export interface EventLogStats {
  /** Acks for new messages. */
  published: number;
  /** Acks that JetStream marked duplicate (a republished batch inside the dedupe window). */
  duplicates: number;
  /** publish() calls that failed after their retries (the batch stays in the outbox). */
  failedBatches: number;
}

export interface FollowHandle {
  close(): Promise<void>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The cluster event log: one JetStream stream, subjects by tenant → project →
 * entity → kind, published with the event id as message id so a batch the
 * outbox republishes after a crash is deduplicated inside the window.
 */
export class JetStreamEventLog {
  readonly stream: string;
  readonly stats: EventLogStats = { published: 0, duplicates: 0, failedBatches: 0 };
  private readonly opts: Required<Omit<EventStreamOptions, 'stream' | 'replicas'>> & { replicas: number };
  /** A JetStream context with a short request timeout, for creating readers' consumers (see CONSUMER_CREATE_TIMEOUT_MS). */
  private readerJs: JetStreamClient | null = null;

  constructor(private readonly conn: ClusterConnection, opts: EventStreamOptions = {}) {
    this.stream = opts.stream ?? EVENT_STREAM_DEFAULTS.stream;
    this.opts = {
      maxAgeMs: opts.maxAgeMs ?? EVENT_STREAM_DEFAULTS.maxAgeMs,
      maxBytes: opts.maxBytes ?? EVENT_STREAM_DEFAULTS.maxBytes,
      duplicateWindowMs: opts.duplicateWindowMs ?? EVENT_STREAM_DEFAULTS.duplicateWindowMs,
      publishDeadlineMs: opts.publishDeadlineMs ?? EVENT_STREAM_DEFAULTS.publishDeadlineMs,
      replicas: opts.replicas ?? replicasFor(conn),
    };
    if (!Number.isInteger(this.opts.maxAgeMs) || this.opts.maxAgeMs < 0) throw new Error('event stream maxAgeMs must be an integer >= 0');
    if (!Number.isInteger(this.opts.maxBytes) || (this.opts.maxBytes < 1 && this.opts.maxBytes !== -1)) throw new Error('event stream maxBytes must be -1 or positive');
    if (!Number.isInteger(this.opts.duplicateWindowMs) || this.opts.duplicateWindowMs < 1_000) throw new Error('event stream duplicateWindowMs must be >= 1000');
    // JetStream refuses a dedupe window longer than max_age.
    if (this.opts.maxAgeMs > 0 && this.opts.duplicateWindowMs > this.opts.maxAgeMs) throw new Error('event stream duplicateWindowMs must not exceed maxAgeMs');
  }

  private config(): Partial<StreamConfig> & { name: string } {
    return {
      name: this.stream,
      subjects: [`${EVENT_SUBJECT_ROOT}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      num_replicas: this.opts.replicas,
      duplicate_window: ms2ns(this.opts.duplicateWindowMs),
      max_age: ms2ns(this.opts.maxAgeMs),
      max_bytes: this.opts.maxBytes,
    };
  }

  /**
   * Creates the stream, or updates its limits when they differ from the
   * options. Safe when several nodes start at once. Retries through leader
   * elections for up to `deadlineMs`.
   */
  async ensure(deadlineMs = 30_000): Promise<void> {
    const want = this.config();
    await retryJetStream(async () => {
      let current: StreamConfig | null = null;
      try {
        current = (await this.conn.jsm.streams.info(this.stream)).config;
      } catch (err) {
        if (!isStreamNotFound(err)) throw err;
      }
      if (current === null) {
        try {
          await this.conn.jsm.streams.add(want);
          return;
        } catch (err) {
          // Another node created it between our info and add: fall through to compare and update.
          if (!/already in use|exists/i.test(String((err as Error).message))) throw err;
          current = (await this.conn.jsm.streams.info(this.stream)).config;
        }
      }
      const differs = current.num_replicas !== want.num_replicas || current.duplicate_window !== want.duplicate_window || current.max_age !== want.max_age || current.max_bytes !== want.max_bytes;
      if (differs) await this.conn.jsm.streams.update(this.stream, { ...current, ...want, subjects: current.subjects.includes(`${EVENT_SUBJECT_ROOT}.>`) ? current.subjects : want.subjects });
    }, { deadlineMs });
  }

  /**
   * Publishes a batch and waits for every ack. All messages are in flight at
   * once (one connection keeps them in order); each retries transient
   * failures on its own until the deadline. Rejects if any message is not
   * acknowledged: the caller keeps the batch and republishes it, and the
   * message ids make the repeats harmless.
   */
  async publish(events: readonly LogEvent[]): Promise<void> {
    if (events.length === 0) return;
    const deadlineMs = this.opts.publishDeadlineMs;
    const results = await Promise.allSettled(events.map((e) => {
      const subject = eventSubject(e);
      const payload = encoder.encode(JSON.stringify(e));
      return retryJetStream(() => this.conn.js.publish(subject, payload, { msgID: e.id }), { deadlineMs });
    }));
    let failure: unknown = null;
    for (const r of results) {
      if (r.status === 'rejected') {
        failure ??= r.reason;
        continue;
      }
      if (r.value.duplicate) this.stats.duplicates++;
      else this.stats.published++;
    }
    if (failure !== null) {
      this.stats.failedBatches++;
      throw failure;
    }
  }

  /** The stream's last sequence (0 when empty): a tail that starts "now" follows from here. */
  async lastSeq(): Promise<number> {
    const info = await retryJetStream(() => this.conn.jsm.streams.info(this.stream));
    return info.state.last_seq;
  }

  private orderedConsumer(filter: string, afterSeq: number): Promise<Consumer> {
    this.readerJs ??= jetstream(this.conn.nc, { timeout: CONSUMER_CREATE_TIMEOUT_MS });
    const js = this.readerJs;
    return retryJetStream(
      () =>
        js.consumers.get(this.stream, {
          filter_subjects: filter,
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: afterSeq + 1,
          // An abandoned ordered consumer (a node died mid-tail) is removed by the server after this.
          inactive_threshold: 30_000,
        }),
      { deadlineMs: 20_000 },
    );
  }

  /**
   * Reads one project's events after `afterSeq`, oldest first, up to `limit`
   * (stops at the end of the stream).
   */
  async read(tenantId: string, projectId: string, afterSeq = 0, limit = Number.MAX_SAFE_INTEGER): Promise<StoredEvent[]> {
    return this.readFiltered(projectFilter(tenantId, projectId), afterSeq, limit);
  }

  /** Like read() over any filter (tests count the whole stream with `evt.>`). */
  async readFiltered(filter: string, afterSeq = 0, limit = Number.MAX_SAFE_INTEGER): Promise<StoredEvent[]> {
    const consumer = await this.orderedConsumer(filter, afterSeq);
    const out: StoredEvent[] = [];
    try {
      for (;;) {
        const want = Math.min(500, limit - out.length);
        if (want <= 0) return out;
        const batch = await consumer.fetch({ max_messages: want, expires: 1_000 });
        let got = 0;
        let pending = 1;
        for await (const m of batch) {
          out.push(toStored(m));
          got++;
          pending = m.info.pending;
        }
        if (got === 0 || pending === 0) return out;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
  }

  /**
   * Follows one project's events after `afterSeq` with an ordered consumer
   * (R1, in memory: cheap, and any node can serve it). The consumer can die
   * with its server; the client library's own recovery waits up to its pull
   * expiry between attempts, so this supervises it: no message or heartbeat
   * for `stallMs`, or a consumer/stream/no-responders notification, and the
   * consumer is replaced by a new one starting after the last delivered
   * sequence. Delivery stays in stream order with no gap and no repeat.
   * `onEvent` returning false stops the tail; `onError` is called (and the
   * tail stops) only when no consumer could be recreated for `giveUpMs`.
   */
  async follow(
    tenantId: string,
    projectId: string,
    afterSeq: number,
    onEvent: (e: StoredEvent) => boolean | void,
    onError: (err: unknown) => void = () => undefined,
    opts: { heartbeatMs?: number; stallMs?: number; giveUpMs?: number } = {},
  ): Promise<FollowHandle> {
    const filter = projectFilter(tenantId, projectId);
    const heartbeatMs = opts.heartbeatMs ?? 2_000;
    const stallMs = opts.stallMs ?? 3 * heartbeatMs;
    const giveUpMs = opts.giveUpMs ?? 30_000;
    let last = afterSeq;
    let closed = false;
    let generation = 0;
    let lastSign = Date.now();
    let restarting = false;
    let current: { consumer: Consumer; messages: ConsumerMessages } | null = null;
    let watchdog: NodeJS.Timeout | null = null;
    const handle: FollowHandle = {
      close: async () => {
        if (closed) return;
        closed = true;
        generation++;
        if (watchdog !== null) clearInterval(watchdog);
        const c = current;
        current = null;
        if (c !== null) {
          await c.messages.close().catch(() => undefined);
          await c.consumer.delete().catch(() => undefined);
        }
      },
    };

    const drop = (c: { consumer: Consumer; messages: ConsumerMessages } | null): void => {
      if (c === null) return;
      void c.messages.close().catch(() => undefined);
      void c.consumer.delete().catch(() => undefined);
    };
    const open = async (): Promise<void> => {
      const gen = ++generation;
      const consumer = await this.orderedConsumer(filter, last);
      const messages = await consumer.consume({
        max_messages: 100,
        expires: 10_000,
        idle_heartbeat: heartbeatMs,
        callback: (m) => {
          if (closed || gen !== generation) return;
          lastSign = Date.now();
          if (m.seq <= last) return;
          let e: StoredEvent;
          try {
            e = toStored(m);
          } catch {
            last = m.seq; // not an event envelope: skip it rather than stall the tail
            return;
          }
          last = m.seq;
          if (onEvent(e) === false) void handle.close();
        },
      });
      if (closed || gen !== generation) {
        drop({ consumer, messages });
        return;
      }
      current = { consumer, messages };
      lastSign = Date.now();
      void (async () => {
        for await (const n of messages.status()) {
          if (gen !== generation) return;
          if (n.type === 'heartbeat') lastSign = Date.now();
          else if (['heartbeats_missed', 'consumer_not_found', 'consumer_deleted', 'stream_not_found', 'no_responders'].includes(n.type)) lastSign = 0;
        }
      })().catch(() => undefined);
    };
    const restart = async (): Promise<void> => {
      if (restarting || closed) return;
      restarting = true;
      const old = current;
      current = null;
      generation++;
      drop(old);
      const since = Date.now();
      try {
        for (;;) {
          if (closed) return;
          try {
            await open();
            return;
          } catch (err) {
            if (Date.now() - since > giveUpMs) {
              void handle.close();
              onError(err);
              return;
            }
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      } finally {
        restarting = false;
      }
    };

    await open();
    watchdog = setInterval(() => {
      if (!closed && Date.now() - lastSign > stallMs) void restart();
    }, Math.max(250, Math.floor(heartbeatMs / 2)));
    watchdog.unref();
    return handle;
  }
}

function toStored(m: JsMsg): StoredEvent {
  return {
    seq: m.seq,
    msgId: m.headers?.get('Nats-Msg-Id') ?? null,
    subject: m.subject,
    event: JSON.parse(decoder.decode(m.data)) as LogEvent,
  };
}

function isStreamNotFound(err: unknown): boolean {
  const e = err as { name?: string; code?: number; message?: string; apiError?: () => { err_code?: number } };
  if (e?.name === 'StreamNotFoundError') return true;
  try {
    if (typeof e?.apiError === 'function' && e.apiError().err_code === 10059) return true;
  } catch {
    /* not an API error */
  }
  return /stream not found/i.test(String(e?.message ?? ''));
}
