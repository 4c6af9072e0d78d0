import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { enqueueFires, recordTriggerDecisions, type FireRequest, type TriggerDecisionRow } from './enqueue.js';
import { decideFire } from './misfire.js';
import type { QueuedRun } from './run-usage.js';
import type { MisfirePolicy, OverlapPolicy, RetryPolicy, TriggerSpec } from './types.js';

const S = PLATFORM_SCHEMA;
/** Due triggers handled per transaction (four statements, whatever its size): locks stay short, and other scanners' SKIP LOCKED find the rest. */
const BATCH = 500;

/** What one scan did. */
export interface ScanOutcome {
  /** Runs queued (committed). */
  queued: QueuedRun[];
  /** The nearest `next_fire_at` of an active time trigger after the scan (null: none). */
  nextDueAt: Date | null;
}

interface DueRow {
  id: string; kind: TriggerSpec['kind']; spec: TriggerSpec; misfire: MisfirePolicy; next_fire_at: string | Date;
  definition_id: string; tenant_id: string; project_id: string; branch: string; overlap: OverlapPolicy; retry: RetryPolicy; input: unknown;
}

/** A due time trigger of a live, active definition (paused: it stays due until resume, then misfire decides). */
const LIVE_TIME_TRIGGER = `t.kind IN ('cron', 'interval', 'once') AND d.state = 'active' AND d.deleted_at IS NULL`;

/**
 * One batch: due triggers locked FOR UPDATE SKIP LOCKED, each decided (on time,
 * collapsed or skipped: misfire.ts), their runs queued (enqueueFires), their
 * audit rows written and their `next_fire_at` moved on, in one transaction of
 * four statements whatever the batch's size. A second scanner (a cluster's lease
 * moving mid-scan) skips the locked rows, and the unique (trigger, scheduledFor)
 * key makes any fire it still repeats a `duplicate`.
 */
async function scanBatch(tx: SqlExecutor, now: Date): Promise<{ handled: number; queued: QueuedRun[]; lagMs: number | null }> {
  const due = (await tx.query<DueRow>(
    `SELECT t.id, t.kind, t.spec, t.misfire, t.next_fire_at, d.id AS definition_id, d.tenant_id, d.project_id, d.branch, d.overlap, d.retry, d.input
     FROM ${S}.task_triggers t JOIN ${S}.task_definitions d ON d.id = t.definition_id
     WHERE t.next_fire_at <= $1 AND ${LIVE_TIME_TRIGGER}
     ORDER BY t.next_fire_at LIMIT ${BATCH} FOR UPDATE OF t SKIP LOCKED`, [now.toISOString()],
  )).rows;
  if (due.length === 0) return { handled: 0, queued: [], lagMs: null };
  let lagMs: number | null = null;
  const decided = due.map((t) => ({ t, decision: decideFire({ ...t.spec, kind: t.kind } as TriggerSpec, t.misfire, new Date(t.next_fire_at), now), correlationId: randomUUID() }));
  const fires: FireRequest[] = decided.filter((x) => x.decision.action !== 'skip').map(({ t, decision, correlationId }) => ({
    definition: { id: t.definition_id, tenantId: t.tenant_id, projectId: t.project_id, branch: t.branch, overlap: t.overlap, retry: t.retry },
    triggerId: t.id, scheduledFor: decision.at, input: t.input, correlationId,
  }));
  const outcomes = await enqueueFires(tx, fires);
  const audit: TriggerDecisionRow[] = [];
  const queued: QueuedRun[] = [];
  for (const { t, decision, correlationId } of decided) {
    const row = { projectId: t.project_id, definitionId: t.definition_id, triggerId: t.id, scheduledFor: decision.at };
    if (decision.action === 'skip') {
      audit.push({ ...row, decision: 'misfireSkipped' });
      continue;
    }
    if (decision.action === 'collapse') audit.push({ ...row, decision: 'misfireCollapsed' });
    const out = outcomes.get(t.id)!;
    if (out.decision === 'started') {
      audit.push({ ...row, decision: 'started', runId: out.runId });
      queued.push({ tenantId: t.tenant_id, projectId: t.project_id, runId: out.runId, correlationId, cause: 'schedule' });
    } else if (out.decision === 'skippedOverlap') audit.push({ ...row, decision: 'skippedOverlap' });
    // `duplicate`: another scanner queued this fire already; nothing more to say.
    if (decision.action === 'fire') lagMs = Math.max(lagMs ?? 0, now.getTime() - decision.at.getTime());
  }
  await recordTriggerDecisions(tx, audit);
  await tx.query(
    `UPDATE ${S}.task_triggers t SET next_fire_at = x.next, last_fire_at = x.at
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, next timestamptz, at timestamptz) WHERE t.id = x.id`,
    [JSON.stringify(decided.map(({ t, decision }) => ({ id: t.id, next: decision.next === null ? null : decision.next.toISOString(), at: decision.at.toISOString() })))],
  );
  return { handled: due.length, queued, lagMs };
}

/**
 * Fires every due time trigger (batch after batch until none is left), records
 * the scanner's health in `scheduler_state` ('scanner': node, last scan, how late
 * the latest on-time fire was handled) and answers when the next one is due, so
 * the caller sleeps until then.
 */
export async function scanTimeTriggers(db: SqlClient, nodeId: string): Promise<ScanOutcome> {
  const queued: QueuedRun[] = [];
  let lagMs: number | null = null;
  // An idle scan is one query: nothing due, no transaction (a node scans twice a second).
  const first = await nearestFire(db);
  if (first !== null && first.getTime() > Date.now()) {
    await recordScan(db, nodeId, null);
    return { queued, nextDueAt: first };
  }
  for (;;) {
    const now = new Date();
    const b = await db.transaction((tx) => scanBatch(tx, now));
    queued.push(...b.queued);
    if (b.lagMs !== null) lagMs = b.lagMs;
    if (b.handled < BATCH) break;
  }
  await recordScan(db, nodeId, lagMs);
  return { queued, nextDueAt: await nearestFire(db) };
}

/** The nearest `next_fire_at` of a live time trigger (null: none). */
async function nearestFire(db: SqlClient): Promise<Date | null> {
  const at = (await db.query<{ at: string | Date | null }>(
    `SELECT min(t.next_fire_at) AS at FROM ${S}.task_triggers t JOIN ${S}.task_definitions d ON d.id = t.definition_id
     WHERE t.next_fire_at IS NOT NULL AND ${LIVE_TIME_TRIGGER}`,
  )).rows[0]?.at ?? null;
  return at === null ? null : new Date(at);
}

/** When this process last wrote the scanner's health row, per database: an idle scanner writes it every RECORD_EVERY_MS, not every scan. */
const lastRecordAt = new WeakMap<SqlClient, number>();
const RECORD_EVERY_MS = 2_000;

/** The scanner's health in `scheduler_state` ('scanner'): node, last scan, how late the latest on-time fire was handled (Diagnostics). */
async function recordScan(db: SqlClient, nodeId: string, lagMs: number | null): Promise<void> {
  if (lagMs === null && Date.now() - (lastRecordAt.get(db) ?? 0) < RECORD_EVERY_MS) return;
  lastRecordAt.set(db, Date.now());
  await db.query(
    `INSERT INTO ${S}.scheduler_state (name, node, last_scan_at, lag_ms) VALUES ('scanner', $1, now(), COALESCE($2::int, 0))
     ON CONFLICT (name) DO UPDATE SET node = EXCLUDED.node, last_scan_at = EXCLUDED.last_scan_at, lag_ms = COALESCE($2::int, ${S}.scheduler_state.lag_ms)`,
    [nodeId, lagMs],
  );
}
