import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import { BufferedWriter } from '../buffered-writer.js';
import type { Logger } from '../log.js';
import type { AuditSink } from '../services.js';
import type { AuditRow } from './evidence.js';

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
 * so the hot path never waits on them (ADR 0003): BufferedWriter's cadence,
 * bounds and statement sizes, flushed on shutdown.
 */
export class BufferedAuditWriter implements AuditSink {
  private readonly buffer: BufferedWriter<AuditRow>;

  constructor(db: SqlClient, log: Logger) {
    this.buffer = new BufferedWriter(db, log, {
      name: 'audit',
      items: 'rows',
      write: (batch) => db.query(INSERT_SQL, columns(batch), 'plinth_audit_insert'),
    });
  }

  record(row: AuditRow): void {
    this.buffer.record(row);
  }

  flush(): Promise<void> {
    return this.buffer.flush();
  }
}
