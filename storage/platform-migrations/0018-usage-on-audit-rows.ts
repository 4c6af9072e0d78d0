import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 18: usage carried by the audit row. Shipped: never edit it, add a new one. */
export const m0018: Migration = {
  version: 18,
  name: 'usage carried by the audit row',
  // A dispatched operation that consumes (an entity read or write, a realtime subscription)
  // records its usage on its own audit row instead of a second row in usage_events: one
  // evidence row per request (docs/usage.md, docs/performance.md). usage_events keeps the usage
  // no request carries (webhook deliveries, overage). One partial index serves the quota sums
  // (project, kind, at) and the event listing per kind in (at, seq) order; rows without usage
  // (control plane, refusals) add nothing to it. last_audit_seq is BillingDrainRollup's mark
  // in the audit table; it starts past every existing row (none carries usage yet).
  // usage_ledger is every usage event, wherever it is kept: readers filter it by project, kind
  // and time, and PostgreSQL pushes those conditions into each arm (each arm uses its index).
  statements: [
    `ALTER TABLE ${S}.audit ADD COLUMN usage_kind text NULL`,
    `ALTER TABLE ${S}.audit ADD COLUMN usage_quantity bigint NULL`,
    `ALTER TABLE ${S}.audit ADD COLUMN usage_dimensions jsonb NULL`,
    `CREATE INDEX audit_usage_idx ON ${S}.audit (project_id, usage_kind, at, seq) WHERE usage_kind IS NOT NULL`,
    `ALTER TABLE ${S}.usage_rollup_cursor ADD COLUMN last_audit_seq bigint NOT NULL DEFAULT 0`,
    `UPDATE ${S}.usage_rollup_cursor SET last_audit_seq = COALESCE((SELECT max(seq) FROM ${S}.audit), 0)`,
    `CREATE VIEW ${S}.usage_ledger AS
      SELECT 'e'::text AS src, id, project_id, kind, quantity, at, operation_id, correlation_id, dimensions FROM ${S}.usage_events
      UNION ALL
      SELECT 'a'::text, seq, project_id, usage_kind, usage_quantity, at, operation_id, correlation_id, usage_dimensions
      FROM ${S}.audit WHERE usage_kind IS NOT NULL`,
  ],
};
