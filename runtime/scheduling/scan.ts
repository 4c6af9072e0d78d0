import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { enqueueRun, recordTriggerDecision, type DefinitionForRun } from './enqueue.js';
import { decideFire } from './misfire.js';
import type { QueuedRun } from './run-usage.js';
import type { MisfirePolicy, OverlapPolicy, RetryPolicy, TriggerSpec } from './types.js';

const S = PLATFORM_SCHEMA;
/** Due triggers handled per transaction: locks stay short, and other scanners' SKIP LOCKED find the rest. */
const BATCH = 100;

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
 * collapsed or skipped: misfire.ts), its run queued by enqueueRun and its
 * `next_fire_at` moved on, in one transaction. A second scanner (a cluster's
 * lease moving mid-scan) skips the locked rows, and the unique (trigger,
 * scheduledFor) key makes any fire it still repeats a `duplicate`.
 */
async function scanBatch(tx: SqlExecutor, now: Date): Promise<{ handled: number; queued: QueuedRun[]; lagMs: number | null }> {
  const due = (await tx.query<DueRow>(
    `SELECT t.id, t.kind, t.spec, t.misfire, t.next_fire_at, d.id AS definition_id, d.tenant_id, d.project_id, d.branch, d.overlap, d.retry, d.input
     FROM ${S}.task_triggers t JOIN ${S}.task_definitions d ON d.id = t.definition_id
     WHERE t.next_fire_at <= $1 AND ${LIVE_TIME_TRIGGER}
     ORDER BY t.next_fire_at LIMIT ${BATCH} FOR UPDATE OF t SKIP LOCKED`, [now.toISOString()],
  )).rows;
  const queued: QueuedRun[] = [];
  let lagMs: number | null = null;
  for (const t of due) {
    // The column is the kind; `spec` holds the kind's own members.
    const decision = decideFire({ ...t.spec, kind: t.kind } as TriggerSpec, t.misfire, new Date(t.next_fire_at), now);
    const audit = { projectId: t.project_id, definitionId: t.definition_id, triggerId: t.id, scheduledFor: decision.at };
    if (decision.action === 'skip') await recordTriggerDecision(tx, { ...audit, decision: 'misfireSkipped' });
    else {
      if (decision.action === 'collapse') await recordTriggerDecision(tx, { ...audit, decision: 'misfireCollapsed' });
      const definition: DefinitionForRun = { id: t.definition_id, tenantId: t.tenant_id, projectId: t.project_id, branch: t.branch, overlap: t.overlap, retry: t.retry };
      const correlationId = randomUUID();
      const out = await enqueueRun(tx, { definition, triggerId: t.id, cause: 'schedule', scheduledFor: decision.at, input: t.input, correlationId });
      if (out.decision === 'started') {
        queued.push({ tenantId: t.tenant_id, projectId: t.project_id, runId: out.run.id, correlationId, cause: 'schedule' });
        await recordTriggerDecision(tx, { ...audit, decision: 'started', runId: out.run.id });
      } else if (out.decision === 'skippedOverlap') await recordTriggerDecision(tx, { ...audit, decision: 'skippedOverlap' });
      // `duplicate`: another scanner queued this fire already; nothing more to say.
      if (decision.action === 'fire') lagMs = Math.max(lagMs ?? 0, now.getTime() - decision.at.getTime());
    }
    await tx.query(
      `UPDATE ${S}.task_triggers SET next_fire_at = $2, last_fire_at = $3 WHERE id = $1`,
      [t.id, decision.next === null ? null : decision.next.toISOString(), decision.at.toISOString()],
    );
  }
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
  for (;;) {
    const now = new Date();
    const b = await db.transaction((tx) => scanBatch(tx, now));
    queued.push(...b.queued);
    if (b.lagMs !== null) lagMs = b.lagMs;
    if (b.handled < BATCH) break;
  }
  await db.query(
    `INSERT INTO ${S}.scheduler_state (name, node, last_scan_at, lag_ms) VALUES ('scanner', $1, now(), COALESCE($2::int, 0))
     ON CONFLICT (name) DO UPDATE SET node = EXCLUDED.node, last_scan_at = EXCLUDED.last_scan_at, lag_ms = COALESCE($2::int, ${S}.scheduler_state.lag_ms)`,
    [nodeId, lagMs],
  );
  const next = (await db.query<{ at: string | Date | null }>(
    `SELECT min(t.next_fire_at) AS at FROM ${S}.task_triggers t JOIN ${S}.task_definitions d ON d.id = t.definition_id
     WHERE t.next_fire_at IS NOT NULL AND ${LIVE_TIME_TRIGGER}`,
  )).rows[0]?.at ?? null;
  return { queued, nextDueAt: next === null ? null : new Date(next) };
}
