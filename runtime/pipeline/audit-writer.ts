import { isConnectionError, PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import type { Logger } from '../log.js';
import type { AuditSink } from '../services.js';
import type { AuditRow } from './evidence.js';

const FLUSH_EVERY_MS = 50;
const MAX_BATCH = 500;
/** Above this many pending rows we drop the oldest rather than grow without bound (and log it). */
const MAX_PENDING = 50_000;
/**
 * Rows per INSERT statement. PGlite is one connection and runs in the Node
 * thread: a 500-row INSERT stalls the event loop and the queries queued
 * behind it for ~25 ms, a 100-row one for about half that
 * (docs/performance.md). On PostgreSQL the flush holds one pooled connection
 * and requests use the others, so one statement per 500 rows is cheapest.
 */
const ROWS_PER_STATEMENT = { pglite: 100, postgres: 500 } as const;

/**
 * Sixteen array parameters unpacked by unnest (PostgreSQL, PGlite and
 * CockroachDB all take the multi-argument form) instead of 16 placeholders
 * per row: cheaper to build and to parse than thousands of placeholders, and
 * the SQL text is the same whatever the row count (so it is prepared once per
 * connection: the flush runs every 50 ms under load). The JSON columns travel
 * as text[] and are cast per row, so no backend needs jsonb[] parameters;
 * `at` travels as epoch milliseconds (a number, no Date or string per row).
 */
const INSERT_SQL = `INSERT INTO ${PLATFORM_SCHEMA}.audit
  (at, correlation_id, tenant_id, project_id, actor, operation_id, decision, reason_code, status, stage, evaluated_filter, field_masks, details,
   usage_kind, usage_quantity, usage_dimensions)
  SELECT to_timestamp(w / 1000.0), c, t, p, a, o, d, r, s, g, f::jsonb, m::jsonb, x::jsonb, uk, uq, ud::jsonb
  FROM unnest($1::float8[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[],
    $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[], $16::text[])
    AS u(w, c, t, p, a, o, d, r, s, g, f, m, x, uk, uq, ud)`;

/**
 * The JSON columns are serialized here, in the flush, never on the request
 * path. A value JSON cannot hold (a BigInt, a cycle) records as `empty`
 * rather than failing the whole batch's statement.
 */
function json(v: unknown, empty: string | null): string | null {
  if (v === null || v === undefined) return empty;
  try {
    return JSON.stringify(v);
  } catch {
    return empty;
  }
}

const columns = (batch: AuditRow[]): unknown[] => [
  batch.map((r) => r.at), batch.map((r) => r.correlationId), batch.map((r) => r.tenantId), batch.map((r) => r.projectId), batch.map((r) => r.actor),
  batch.map((r) => r.operationId), batch.map((r) => r.decision), batch.map((r) => r.reasonCode), batch.map((r) => r.status),
  batch.map((r) => r.stage),
  batch.map((r) => json(r.evaluatedFilter, null)),
  batch.map((r) => (r.fieldMasks.length === 0 ? '[]' : json(r.fieldMasks, '[]'))),
  batch.map((r) => json(r.details, '{}')),
  batch.map((r) => r.usage?.kind ?? null), batch.map((r) => (r.usage === null ? null : Math.trunc(r.usage.quantity))),
  batch.map((r) => json(r.usage?.dimensions, null)),
];

/**
 * Stage 6's sink. Audit rows are buffered and written in multi-row inserts
 * so the hot path never waits on them; a flush happens every 50 ms or at
 * 500 rows, and on shutdown. A flush is written in statements of
 * ROWS_PER_STATEMENT rows, each awaited and followed by a turn of the event
 * loop, so on PGlite requests interleave with a long flush instead of
 * waiting behind all of it.
 */
export class BufferedAuditWriter implements AuditSink {
  private pending: AuditRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;
  private readonly rowsPerStatement: number;

  constructor(private readonly db: SqlClient, private readonly log: Logger) {
    this.rowsPerStatement = ROWS_PER_STATEMENT[db.backend];
  }

  record(row: AuditRow): void {
    if (this.pending.length >= MAX_PENDING) {
      this.pending.shift();
      this.dropped++;
    }
    this.pending.push(row);
    if (this.pending.length >= MAX_BATCH) void this.flush();
    else if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
      this.timer.unref();
    }
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
      // A turn of the event loop between statements: PGlite runs a statement in this thread and
      // its awaits resolve as microtasks, so without it a whole flush is one stall for every request.
      if (!first) await new Promise((r) => setImmediate(r));
      first = false;
      const batch = this.pending.splice(0, this.rowsPerStatement);
      try {
        await this.db.query(INSERT_SQL, columns(batch), 'plinth_audit_insert');
      } catch (err) {
        if (isConnectionError(err) && this.pending.length + batch.length <= MAX_PENDING) {
          // A database blip: keep the rows for the next flush instead of losing them.
          this.pending.unshift(...batch);
          this.log.warn('audit write deferred: storage connection lost', { rows: batch.length });
          if (this.timer === null) {
            this.timer = setTimeout(() => void this.flush(), FLUSH_EVERY_MS * 10);
            this.timer.unref();
          }
          return;
        }
        this.log.error('audit write failed', { rows: batch.length, error: err instanceof Error ? err.message : String(err) });
      }
    }
    if (this.dropped > 0) {
      this.log.warn('audit rows dropped under backpressure', { dropped: this.dropped });
      this.dropped = 0;
    }
  }
}
