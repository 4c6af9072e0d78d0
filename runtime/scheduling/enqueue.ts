import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { toRunRecord, type RunRow } from './rows.js';
import type { OverlapPolicy, RetryPolicy, RunCause, RunContext, TaskRunRecord, TriggerDecision } from './types.js';

const S = PLATFORM_SCHEMA;

/** The definition columns a run is made from. */
export interface DefinitionForRun {
  id: string;
  tenantId: string;
  projectId: string;
  branch: string;
  overlap: OverlapPolicy;
  retry: RetryPolicy;
}

export interface RunRequest {
  definition: DefinitionForRun;
  triggerId: string | null;
  cause: RunCause;
  scheduledFor: Date;
  input: unknown;
  correlationId: string;
  /** Event runs: the event's id; webhook runs: the inbound event's id. One run per (trigger, eventId). */
  eventId?: string;
  context?: RunContext;
}

/**
 * `started`: the run is queued (it starts when a worker claims it).
 * `skippedOverlap`: overlap `skip` and a run of the definition is queued or running (schedule and manual only).
 * `duplicate`: the unique key already has its run (a second scanner, a redelivered event): `runId` is that run.
 */
export type RunOutcome =
  | { decision: 'started'; run: TaskRunRecord }
  | { decision: 'skippedOverlap' }
  | { decision: 'duplicate'; runId: string };

const COLUMNS = `id, definition_id, trigger_id, cause, scheduled_for, state, attempts, input, output, error, event_id, created_at, started_at, finished_at`;

/**
 * Makes one run, or finds why not, in one statement: the unique keys of
 * migration 29 make a second insert for the same fire or event a no-op,
 * whichever node or scanner activation tries it. Overlap `skip` refuses
 * while a run of the definition is queued or running; event and webhook runs
 * never skip (CONTRACT: with `skip` or `queue` they wait their turn).
 *
 * Call it inside the transaction that records why the run exists (a
 * trigger's `next_fire_at`, a webhook receipt), so both commit or neither.
 */
export async function enqueueRun(db: SqlExecutor, r: RunRequest): Promise<RunOutcome> {
  const d = r.definition;
  const skipWhenBusy = d.overlap === 'skip' && (r.cause === 'schedule' || r.cause === 'manual');
  const id = randomUUID();
  const conflict = r.cause === 'schedule' ? `ON CONFLICT (trigger_id, scheduled_for) WHERE cause = 'schedule' DO NOTHING`
    : r.eventId !== undefined ? `ON CONFLICT (trigger_id, event_id) WHERE event_id IS NOT NULL DO NOTHING` : '';
  const ins = await db.query<RunRow>(
    `INSERT INTO ${S}.task_runs (id, tenant_id, project_id, branch, definition_id, trigger_id, cause, scheduled_for, serial, max_attempts, input, event_id, context, correlation_id, due_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13::jsonb, $14, now()
     WHERE NOT $15::boolean OR NOT EXISTS (SELECT 1 FROM ${S}.task_runs WHERE definition_id = $5 AND state IN ('queued', 'running'))
     ${conflict}
     RETURNING ${COLUMNS}`,
    [id, d.tenantId, d.projectId, d.branch, d.id, r.triggerId, r.cause, r.scheduledFor.toISOString(), d.overlap !== 'allow', d.retry.maxAttempts,
      JSON.stringify(r.input ?? null), r.eventId ?? null, r.context === undefined ? null : JSON.stringify(r.context), r.correlationId, skipWhenBusy],
  );
  const row = ins.rows[0];
  if (row !== undefined) return { decision: 'started', run: toRunRecord(row) };
  if (r.triggerId !== null && (r.cause === 'schedule' || r.eventId !== undefined)) {
    const prior = r.cause === 'schedule'
      ? await db.query<{ id: string }>(`SELECT id FROM ${S}.task_runs WHERE trigger_id = $1 AND scheduled_for = $2 AND cause = 'schedule'`, [r.triggerId, r.scheduledFor.toISOString()])
      : await db.query<{ id: string }>(`SELECT id FROM ${S}.task_runs WHERE trigger_id = $1 AND event_id = $2`, [r.triggerId, r.eventId]);
    const p = prior.rows[0];
    if (p !== undefined) return { decision: 'duplicate', runId: p.id };
  }
  return { decision: 'skippedOverlap' };
}

/** A fire decision with its reason, as a TriggerAudit row records it (CONTRACT "/api/TriggerAudit"). */
export interface TriggerDecisionRow {
  projectId: string;
  definitionId: string;
  triggerId: string | null;
  scheduledFor: Date | null;
  decision: TriggerDecision;
  runId?: string;
}

/** One TriggerAudit row. */
export async function recordTriggerDecision(db: SqlExecutor, d: TriggerDecisionRow): Promise<void> {
  await db.query(
    `INSERT INTO ${S}.trigger_audit (project_id, trigger_id, definition_id, scheduled_for, decision, run_id) VALUES ($1, $2, $3, $4, $5, $6)`,
    [d.projectId, d.triggerId, d.definitionId, d.scheduledFor === null ? null : d.scheduledFor.toISOString(), d.decision, d.runId ?? null],
  );
}

/** One due fire of a time trigger, as the scanner's batch hands it over. */
export interface FireRequest {
  definition: DefinitionForRun;
  triggerId: string;
  scheduledFor: Date;
  input: unknown;
  correlationId: string;
}

/** A fire's outcome, by trigger id: its run, `skippedOverlap`, or `duplicate` (another scanner made that fire's run). */
export type FireOutcome = { decision: 'started'; runId: string } | { decision: 'skippedOverlap' } | { decision: 'duplicate' };

/**
 * enqueueRun for a batch of time-trigger fires, in one statement (the scanner fires
 * thousands of one-minute crons at the same second: one round trip per fire would
 * hold its transaction for seconds). Same rules: the (trigger, scheduledFor) key
 * makes a repeated fire a no-op; overlap `skip` refuses a fire while the
 * definition has a run queued or running — and, within the batch, every fire of
 * such a definition after its first.
 */
export async function enqueueFires(db: SqlExecutor, fires: readonly FireRequest[]): Promise<Map<string, FireOutcome>> {
  const out = new Map<string, FireOutcome>();
  if (fires.length === 0) return out;
  const seenSkip = new Set<string>();
  const rows: Array<Record<string, unknown>> = [];
  for (const f of fires) {
    const d = f.definition;
    if (d.overlap === 'skip') {
      if (seenSkip.has(d.id)) {
        out.set(f.triggerId, { decision: 'skippedOverlap' });
        continue;
      }
      seenSkip.add(d.id);
    }
    rows.push({
      id: randomUUID(), tenant_id: d.tenantId, project_id: d.projectId, branch: d.branch, definition_id: d.id, trigger_id: f.triggerId,
      scheduled_for: f.scheduledFor.toISOString(), serial: d.overlap !== 'allow', max_attempts: d.retry.maxAttempts, input: f.input ?? null,
      correlation_id: f.correlationId, skip_when_busy: d.overlap === 'skip',
    });
  }
  const res = await db.query<{ id: string; trigger_id: string; busy: boolean }>(
    `WITH req AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, tenant_id uuid, project_id uuid, branch text, definition_id uuid, trigger_id uuid,
         scheduled_for timestamptz, serial boolean, max_attempts integer, input jsonb, correlation_id text, skip_when_busy boolean)
     ), busy AS (
       SELECT DISTINCT definition_id FROM ${S}.task_runs WHERE definition_id IN (SELECT definition_id FROM req WHERE skip_when_busy) AND state IN ('queued', 'running')
     ), ins AS (
       INSERT INTO ${S}.task_runs (id, tenant_id, project_id, branch, definition_id, trigger_id, cause, scheduled_for, serial, max_attempts, input, correlation_id, due_at)
       SELECT id, tenant_id, project_id, branch, definition_id, trigger_id, 'schedule', scheduled_for, serial, max_attempts, COALESCE(input, 'null'::jsonb), correlation_id, now()
       FROM req WHERE NOT (skip_when_busy AND definition_id IN (SELECT definition_id FROM busy))
       ON CONFLICT (trigger_id, scheduled_for) WHERE cause = 'schedule' DO NOTHING
       RETURNING id, trigger_id
     )
     SELECT ins.id, req.trigger_id, false AS busy FROM req JOIN ins ON ins.trigger_id = req.trigger_id
     UNION ALL
     SELECT NULL, req.trigger_id, true FROM req WHERE req.skip_when_busy AND req.definition_id IN (SELECT definition_id FROM busy)`,
    [JSON.stringify(rows)],
  );
  for (const r of res.rows) out.set(r.trigger_id, r.busy ? { decision: 'skippedOverlap' } : { decision: 'started', runId: r.id });
  for (const f of fires) if (!out.has(f.triggerId)) out.set(f.triggerId, { decision: 'duplicate' });
  return out;
}

/** Many TriggerAudit rows in one statement (the scanner's batch). */
export async function recordTriggerDecisions(db: SqlExecutor, decisions: readonly TriggerDecisionRow[]): Promise<void> {
  if (decisions.length === 0) return;
  await db.query(
    `INSERT INTO ${S}.trigger_audit (project_id, trigger_id, definition_id, scheduled_for, decision, run_id)
     SELECT project_id, trigger_id, definition_id, scheduled_for, decision, run_id
     FROM jsonb_to_recordset($1::jsonb) AS r(project_id uuid, trigger_id uuid, definition_id uuid, scheduled_for timestamptz, decision text, run_id uuid)`,
    [JSON.stringify(decisions.map((d) => ({
      project_id: d.projectId, trigger_id: d.triggerId, definition_id: d.definitionId,
      scheduled_for: d.scheduledFor === null ? null : d.scheduledFor.toISOString(), decision: d.decision, run_id: d.runId ?? null,
    })))],
  );
}
