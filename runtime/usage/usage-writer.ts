import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import { BufferedWriter } from '../buffered-writer.js';
import type { Logger } from '../log.js';
import type { UsageEvent, UsageSink } from '../services.js';

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
 * are buffered and written in multi-row inserts with the audit writer's
 * cadence (ADR 0006, BufferedWriter), and on shutdown, so the request path
 * only pushes an object. A connection loss keeps the batch for the next flush.
 */
export class BufferedUsageWriter implements UsageSink {
  private readonly buffer: BufferedWriter<UsageEvent>;

  constructor(db: SqlClient, log: Logger) {
    this.buffer = new BufferedWriter(db, log, { name: 'usage', items: 'events', write: (batch) => db.query(INSERT_SQL, columns(batch)) });
  }

  record(event: UsageEvent): void {
    this.buffer.record(event);
  }

  /** Events recorded on this node and not yet written (quotas may add them to what the table says). */
  unflushed(): readonly UsageEvent[] {
    return this.buffer.unflushed();
  }

  flush(): Promise<void> {
    return this.buffer.flush();
  }
}
