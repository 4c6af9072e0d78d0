import { PLATFORM_SCHEMA } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

/** The operator actors of the spec that sweep evidence; each owns the rules naming it. */
export type SweeperName = 'ObservabilityDrainAudit' | 'StagingTtlSweeper' | 'BillingDrainMetering';

/** How long each kind of row is kept, in ms; 0 keeps it forever. From node/config.ts. */
export interface RetentionSettings {
  auditRetentionMs: number;
  eventRetentionMs: number;
  idempotencyRetentionMs: number;
  webhookDeliveryRetentionMs: number;
  /** Absent: kept forever (callers that predate scheduling). */
  taskRunRetentionMs?: number;
  /** Absent: USAGE_EVENT_RETENTION_DEFAULT_MS. */
  usageEventRetentionMs?: number;
}

/** Usage events are kept 90 days by default: longer than any calendar month a quota sums over. */
export const USAGE_EVENT_RETENTION_DEFAULT_MS = 90 * 86_400_000;

/**
 * One table's retention: rows whose `tsColumn` is older than `retentionMs`
 * (and that match `keep`'s negation) are deleted by `sweeper`, oldest first.
 * `tsColumn` must be indexed (migration 6), or each batch scans the table.
 */
export interface RetentionRule {
  /** For logs and sweep results. */
  name: string;
  sweeper: SweeperName;
  /** Table in the platform schema. */
  table: string;
  /** Columns that identify a row (its primary key): batches are `DELETE … WHERE (key) IN (SELECT key … LIMIT n)`. */
  key: string[];
  tsColumn: string;
  retentionMs: number;
  /** Extra SQL condition a row must also meet to be deleted (rows still needed elsewhere stay). */
  onlyWhere?: string;
}

/** The audit rule's extra condition: a row without usage, or one whose usage is past usage retention and rolled up. */
function usageRowExpired(usageRetentionMs: number): string {
  if (usageRetentionMs <= 0) return 'usage_kind IS NULL';
  return `(usage_kind IS NULL OR (at < now() - (${Math.trunc(usageRetentionMs)}::bigint * interval '1 millisecond')
    AND seq <= (SELECT last_audit_seq FROM ${S}.usage_rollup_cursor WHERE id = 1)))`;
}

/**
 * Every retention rule, in one list. A new kind of evidence (usage rows, a
 * later issue) adds one entry here and one setting in node/config.ts.
 */
export function retentionRules(s: RetentionSettings): RetentionRule[] {
  return [
    {
      name: 'audit', sweeper: 'ObservabilityDrainAudit', table: 'audit', key: ['seq'], tsColumn: 'at', retentionMs: s.auditRetentionMs,
      // An audit row that carries usage is also a usage event (docs/usage.md): it stays as long as
      // usage events do, and until BillingDrainRollup has added it into usage_rollups.
      onlyWhere: usageRowExpired(s.usageEventRetentionMs ?? USAGE_EVENT_RETENTION_DEFAULT_MS),
    },
    {
      name: 'events', sweeper: 'StagingTtlSweeper', table: 'events', key: ['seq'], tsColumn: 'occurred_at', retentionMs: s.eventRetentionMs,
      // The webhook router and the scheduler's event router read `events` after their cursors:
      // an event either has not passed stays, however old, so retention never loses a delivery
      // or an event run. (The scheduler's cursor is made at the log's end when its router first
      // runs: no row yet, no limit. The SSE tail and the realtime hub follow from positions they
      // hold in memory, and only skip forward; see docs/retention.md.)
      onlyWhere: `seq <= COALESCE((SELECT last_seq FROM ${S}.webhook_router_cursor WHERE id = 1), 0)
        AND seq <= COALESCE((SELECT last_seq FROM ${S}.scheduler_state WHERE name = 'events'), seq)`,
    },
    {
      name: 'idempotency keys', sweeper: 'StagingTtlSweeper', table: 'idempotency_keys', key: ['project_id', 'branch', 'operation_id', 'key'],
      tsColumn: 'created_at', retentionMs: s.idempotencyRetentionMs,
    },
    {
      name: 'webhook deliveries', sweeper: 'StagingTtlSweeper', table: 'webhook_deliveries', key: ['id'], tsColumn: 'updated_at',
      retentionMs: s.webhookDeliveryRetentionMs,
      // Only finished deliveries; pending and retrying ones are live work. Matches the partial index.
      onlyWhere: `state IN ('Succeeded', 'DeadLettered')`,
    },
    {
      name: 'task runs', sweeper: 'StagingTtlSweeper', table: 'task_runs', key: ['id'], tsColumn: 'finished_at', retentionMs: s.taskRunRetentionMs ?? 0,
      // Only finished runs (their attempts go with them: ON DELETE CASCADE); queued and running ones are live work. Matches the partial index.
      onlyWhere: `state IN ('succeeded', 'failed', 'cancelled')`,
    },
    {
      name: 'trigger audit', sweeper: 'StagingTtlSweeper', table: 'trigger_audit', key: ['seq'], tsColumn: 'at', retentionMs: s.taskRunRetentionMs ?? 0,
    },
    {
      name: 'usage events', sweeper: 'BillingDrainMetering', table: 'usage_events', key: ['id'], tsColumn: 'at',
      retentionMs: s.usageEventRetentionMs ?? USAGE_EVENT_RETENTION_DEFAULT_MS,
      // Only events BillingDrainRollup has added into usage_rollups (at or below its mark): the rollups keep their totals for good.
      onlyWhere: `id <= (SELECT last_id FROM ${S}.usage_rollup_cursor WHERE id = 1)`,
    },
  ];
}
