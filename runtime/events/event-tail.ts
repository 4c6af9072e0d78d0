import type { SqlExecutor } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';
import { eventsAfter, lastEventSeq, type EventEnvelope } from './event-store.js';

export interface TailScope {
  tenantId: string;
  projectId: string;
}

export interface TailHandler {
  /** One event and its resumable position (the SSE `id`). */
  event(position: string, e: EventEnvelope): void;
  /** The source failed and stopped; the stream should end (the client resumes from its last id). */
  error(err: unknown): void;
}

/**
 * Follows one project's event log. `start` fixes the position before the
 * response starts, so an event committed after the client connected is
 * always delivered; `follow` then streams from it until the returned
 * function is called.
 */
export interface EventTailSource {
  /** Validates a client's Last-Event-ID (null: start at the current end) and returns the position to follow after. */
  start(scope: TailScope, lastEventId: string | null): Promise<string>;
  follow(scope: TailScope, after: string, handler: TailHandler): () => void;
}

const invalidPosition = (): Error =>
  validationFailed('Events.InvalidLastEventId', 'Last-Event-ID is not a position this event log produced', 'Last-Event-ID');

/**
 * A position past the end of the log was never produced by it (a made-up or
 * foreign id, or one from a log that was reset): resuming "after" it would
 * silently skip every event up to it, so it is refused like a malformed one.
 */
const pastEnd = (): Error =>
  validationFailed('Events.InvalidLastEventId', 'Last-Event-ID is past the end of this event log', 'Last-Event-ID');

/** Something that announces committed outbox batches (the OutboxProcessor). */
export interface CommitSignal {
  onCommitted(listener: () => void): () => void;
}

export interface SqlEventTailOptions {
  /** Poll interval when nothing wakes the tail. Default 200 ms. */
  pollMs?: number;
  /** Rows per query. Default 200. */
  pageSize?: number;
  /** Wakes every tail right after the local processor commits a batch. */
  signal?: CommitSignal;
}

const MAX_BIGINT = 9223372036854775807n;

/**
 * Embedded mode: follows the SQL `events` table (positions `e<seq>`). It is
 * written by a single processor, in commit order, so polling `seq > last`
 * misses nothing.
 */
export class SqlEventTail implements EventTailSource {
  private readonly pollMs: number;
  private readonly pageSize: number;

  constructor(private readonly db: SqlExecutor, private readonly opts: SqlEventTailOptions = {}) {
    this.pollMs = opts.pollMs ?? 200;
    this.pageSize = opts.pageSize ?? 200;
  }

  async start(scope: TailScope, lastEventId: string | null): Promise<string> {
    if (lastEventId === null) return `e${await lastEventSeq(this.db, scope.projectId)}`;
    if (!/^e\d{1,19}$/.test(lastEventId) || BigInt(lastEventId.slice(1)) > MAX_BIGINT) throw invalidPosition();
    // The project's own end: its tail never hands out a larger position (start(null) returns this one).
    if (BigInt(lastEventId.slice(1)) > BigInt(await lastEventSeq(this.db, scope.projectId))) throw pastEnd();
    return lastEventId;
  }

  follow(scope: TailScope, after: string, handler: TailHandler): () => void {
    let last = after.slice(1);
    let closed = false;
    let timer: NodeJS.Timeout | null = null;
    let wake: (() => void) | null = null;
    const unsubscribe = this.opts.signal?.onCommitted(() => wake?.()) ?? (() => undefined);
    const sleep = (): Promise<void> =>
      new Promise((resolve) => {
        wake = () => {
          wake = null;
          if (timer !== null) clearTimeout(timer);
          timer = null;
          resolve();
        };
        timer = setTimeout(() => wake?.(), this.pollMs);
      });
    void (async () => {
      try {
        while (!closed) {
          const page = await eventsAfter(this.db, scope.projectId, last, this.pageSize);
          for (const { seq, event } of page) {
            if (closed) return;
            last = seq;
            handler.event(`e${seq}`, event);
          }
          if (page.length < this.pageSize && !closed) await sleep();
        }
      } catch (err) {
        if (!closed) handler.error(err);
      } finally {
        unsubscribe();
      }
    })();
    return () => {
      closed = true;
      wake?.();
    };
  }
}

/** What LogEventTail needs of the cluster log (JetStreamEventLog has this shape). */
export interface SequencedEventLog {
  lastSeq(): Promise<number>;
  follow(
    tenantId: string,
    projectId: string,
    afterSeq: number,
    onEvent: (e: { seq: number; event: unknown }) => boolean | void,
    onError?: (err: unknown) => void,
  ): Promise<{ close(): Promise<void> }>;
}

/**
 * Cluster mode: follows the JetStream stream (positions `j<stream seq>`), so
 * any node serves any project's tail without touching SQL.
 */
export class LogEventTail implements EventTailSource {
  constructor(private readonly log: SequencedEventLog) {}

  async start(_scope: TailScope, lastEventId: string | null): Promise<string> {
    if (lastEventId === null) return `j${await this.log.lastSeq()}`;
    if (!/^j\d{1,15}$/.test(lastEventId) || !Number.isSafeInteger(Number(lastEventId.slice(1)))) throw invalidPosition();
    // Stream sequences are shared by every project, so the stream's last sequence is the end.
    if (Number(lastEventId.slice(1)) > await this.log.lastSeq()) throw pastEnd();
    return lastEventId;
  }

  follow(scope: TailScope, after: string, handler: TailHandler): () => void {
    let closed = false;
    let handle: { close(): Promise<void> } | null = null;
    const fail = (err: unknown): void => {
      if (closed) return;
      closed = true;
      void handle?.close();
      handler.error(err);
    };
    this.log.follow(scope.tenantId, scope.projectId, Number(after.slice(1)), ({ seq, event }) => {
      if (closed) return false;
      handler.event(`j${seq}`, event as EventEnvelope);
      return !closed;
    }, fail).then(
      (h) => {
        if (closed) void h.close();
        else handle = h;
      },
      fail,
    );
    return () => {
      closed = true;
      void handle?.close();
    };
  }
}
