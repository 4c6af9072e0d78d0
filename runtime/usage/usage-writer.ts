import { isConnectionError, PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import type { Logger } from '../log.js';
import type { UsageEvent, UsageSink } from '../services.js';

/** Same cadence as the audit writer (ADR 0006): a request's usage is in the table within ~50 ms. */
const FLUSH_EVERY_MS = 50;
const MAX_BATCH = 500;
/** Above this many pending events the oldest are dropped (and logged) rather than growing without bound. */
const MAX_PENDING = 50_000;
/** Rows per INSERT: PGlite runs a statement in the Node thread, so its statements stay short (docs/performance.md). */
const ROWS_PER_STATEMENT = { pglite: 100, postgres: 500 } as const;

/**
 * Nine array parameters unpacked by unnest: one SQL text whatever the row
 * count, cheap to build and parse. Dimensions travel as text[] and are cast
 * per row, so no backend needs jsonb[] parameters.
 */
const INSERT_SQL = `INSERT INTO ${PLATFORM_SCHEMA}.usage_events
  (tenant_id, project_id, kind, quantity, at, operation_id, correlation_id, dimensions)
  SELECT t, p, k, q, a, o, c, d::jsonb
  FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::timestamptz[], $6::text[], $7::text[], $8::text[])
    AS u(t, p, k, q, a, o, c, d)`;

/** Dimensions are serialized here, in the flush, never on the request path. */
function dimensionsJson(d: UsageEvent['dimensions']): string | null {
  if (d === undefined) return null;
  try {
    return JSON.stringify(d);
  } catch {
    return null;
  }
}

const columns = (batch: UsageEvent[]): unknown[] => [
  batch.map((e) => e.tenantId), batch.map((e) => e.projectId), batch.map((e) => e.kind), batch.map((e) => Math.trunc(e.quantity)),
  batch.map((e) => e.at), batch.map((e) => e.operationId), batch.map((e) => e.correlationId), batch.map((e) => dimensionsJson(e.dimensions)),
];

/**
 * The node's usage sink (the metering half of BillingDrainMetering): events
 * are buffered and written in multi-row inserts every 50 ms or at 500 events,
 * and on shutdown, so the request path only pushes an object. Statements of
 * ROWS_PER_STATEMENT rows are each followed by a turn of the event loop, so
 * on PGlite requests interleave with a long flush. A connection loss keeps
 * the batch for the next flush.
 */
export class BufferedUsageWriter implements UsageSink {
  private pending: UsageEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;
  private readonly rowsPerStatement: number;

  constructor(private readonly db: SqlClient, private readonly log: Logger) {
    this.rowsPerStatement = ROWS_PER_STATEMENT[db.backend];
  }

  record(event: UsageEvent): void {
    if (this.pending.length >= MAX_PENDING) {
      this.pending.shift();
      this.dropped++;
    }
    this.pending.push(event);
    if (this.pending.length >= MAX_BATCH) void this.flush();
    else if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
      this.timer.unref();
    }
  }

  /** Events recorded on this node and not yet written (quotas may add them to what the table says). */
  unflushed(): readonly UsageEvent[] {
    return this.pending;
  }

  flush(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.flushing = this.flushing.then(() => this.writeAll());
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    let first = true;
    while (this.pending.length > 0) {
      if (!first) await new Promise((r) => setImmediate(r));
      first = false;
      const batch = this.pending.splice(0, this.rowsPerStatement);
      try {
        await this.db.query(INSERT_SQL, columns(batch));
      } catch (err) {
        if (isConnectionError(err) && this.pending.length + batch.length <= MAX_PENDING) {
          this.pending.unshift(...batch);
          this.log.warn('usage write deferred: storage connection lost', { rows: batch.length });
          if (this.timer === null) {
            this.timer = setTimeout(() => void this.flush(), FLUSH_EVERY_MS * 10);
            this.timer.unref();
          }
          return;
        }
        this.log.error('usage write failed', { rows: batch.length, error: err instanceof Error ? err.message : String(err) });
      }
    }
    if (this.dropped > 0) {
      this.log.warn('usage events dropped under backpressure', { dropped: this.dropped });
      this.dropped = 0;
    }
  }
}
