import { isConnectionError, type SqlClient } from '../storage/index.js';
import type { Logger } from './log.js';

/**
 * The cadence and bounds of derived evidence (audit rows, usage events;
 * ADR 0003, ADR 0006): a record is in its table within ~50 ms, a flush
 * starts early at 500 records, and memory stays bounded when the database is
 * slow or down.
 */
export const BUFFERED_WRITER_LIMITS = {
  flushEveryMs: 50,
  maxBatch: 500,
  /** Above this many pending records the oldest are dropped (and the count logged) rather than growing without bound. */
  maxPending: 50_000,
  /** After a connection loss the kept records are tried again this much later (ten flush periods). */
  retryAfterMs: 500,
} as const;

export type BufferedWriterLimits = { [K in keyof typeof BUFFERED_WRITER_LIMITS]: number };

/**
 * Records per INSERT statement. PGlite is one connection and runs in the
 * Node thread: a 500-row INSERT stalls the event loop and the queries queued
 * behind it for ~25 ms, a 100-row one for about half that
 * (docs/performance.md). On PostgreSQL the flush holds one pooled connection
 * and requests use the others, so one statement per 500 rows is cheapest.
 */
export const ROWS_PER_STATEMENT = { pglite: 100, postgres: 500 } as const;

export interface BufferedWriterTarget<T> {
  /** Names the records in log lines: `${name} write failed`, `${name} ${items} dropped under backpressure`. */
  name: string;
  items: string;
  /** Writes one statement's worth of records (at most ROWS_PER_STATEMENT of the backend). */
  write(batch: T[]): Promise<unknown>;
}

/**
 * Buffers records and writes them in batches so the request path only pushes
 * an object: a flush every 50 ms or at 500 records, and on graceful stop (the
 * owner awaits `flush()`). A flush is written in statements of
 * ROWS_PER_STATEMENT rows, each awaited and followed by a turn of the event
 * loop, so on PGlite requests interleave with a long flush instead of
 * waiting behind all of it. A connection loss keeps the batch, in order, for
 * a retry; any other failure drops it. Errors are logged, never thrown.
 */
export class BufferedWriter<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;
  private readonly rowsPerStatement: number;
  private readonly limits: BufferedWriterLimits;

  constructor(db: Pick<SqlClient, 'backend'>, private readonly log: Logger, private readonly target: BufferedWriterTarget<T>, limits: Partial<BufferedWriterLimits> = {}) {
    this.rowsPerStatement = ROWS_PER_STATEMENT[db.backend];
    this.limits = { ...BUFFERED_WRITER_LIMITS, ...limits };
  }

  record(item: T): void {
    if (this.pending.length >= this.limits.maxPending) {
      this.pending.shift();
      this.dropped++;
    }
    this.pending.push(item);
    if (this.pending.length >= this.limits.maxBatch) void this.flush();
    else if (this.timer === null) this.schedule(this.limits.flushEveryMs);
  }

  /** Records taken and not yet written, oldest first. */
  unflushed(): readonly T[] {
    return this.pending;
  }

  /** Writes everything pending, after any flush already under way; resolves when done (never rejects). */
  flush(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.flushing = this.flushing.then(() => this.writeAll());
    return this.flushing;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.flush(), ms);
    this.timer.unref();
  }

  private async writeAll(): Promise<void> {
    const { name, items } = this.target;
    let first = true;
    while (this.pending.length > 0) {
      // A turn of the event loop between statements: PGlite runs a statement in this thread and
      // its awaits resolve as microtasks, so without it a whole flush is one stall for every request.
      if (!first) await new Promise((r) => setImmediate(r));
      first = false;
      const batch = this.pending.splice(0, this.rowsPerStatement);
      try {
        await this.target.write(batch);
      } catch (err) {
        if (isConnectionError(err) && this.pending.length + batch.length <= this.limits.maxPending) {
          // A database blip: keep the records for the next flush instead of losing them.
          this.pending.unshift(...batch);
          this.log.warn(`${name} write deferred: storage connection lost`, { rows: batch.length });
          if (this.timer === null) this.schedule(this.limits.retryAfterMs);
          return;
        }
        this.log.error(`${name} write failed`, { rows: batch.length, error: err instanceof Error ? err.message : String(err) });
      }
    }
    if (this.dropped > 0) {
      this.log.warn(`${name} ${items} dropped under backpressure`, { dropped: this.dropped });
      this.dropped = 0;
    }
  }
}
