import { isConnectionError, PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import type { Logger } from '../log.js';
import type { AuditSink } from '../services.js';
import type { AuditRow } from './evidence.js';

const FLUSH_EVERY_MS = 50;
const MAX_BATCH = 500;
/** Above this many pending rows we drop the oldest rather than grow without bound (and log it). */
const MAX_PENDING = 50_000;
const COLS = 8;

/**
 * Stage 6's sink. Audit rows are buffered and written in multi-row inserts
 * so the hot path never waits on them; a flush happens every 50 ms or at
 * 500 rows, and on shutdown.
 */
export class BufferedAuditWriter implements AuditSink {
  private pending: AuditRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(private readonly db: SqlClient, private readonly log: Logger) {}

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
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_BATCH);
      const values: unknown[] = [];
      const tuples = batch.map((r, i) => {
        values.push(r.correlationId, r.tenantId, r.projectId, r.actor, r.operationId, r.decision, r.reasonCode, r.status);
        const b = i * COLS;
        return `($${b + 1}, $${b + 2}::uuid, $${b + 3}::uuid, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8})`;
      });
      try {
        await this.db.query(`INSERT INTO ${PLATFORM_SCHEMA}.audit (correlation_id, tenant_id, project_id, actor, operation_id, decision, reason_code, status) VALUES ${tuples.join(', ')}`, values);
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
