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

/** One TriggerAudit row: a fire decision with its reason (CONTRACT "/api/TriggerAudit"). */
export async function recordTriggerDecision(db: SqlExecutor, d: {
  projectId: string; definitionId: string; triggerId: string | null; scheduledFor: Date | null; decision: TriggerDecision; runId?: string;
}): Promise<void> {
  await db.query(
    `INSERT INTO ${S}.trigger_audit (project_id, trigger_id, definition_id, scheduled_for, decision, run_id) VALUES ($1, $2, $3, $4, $5, $6)`,
    [d.projectId, d.triggerId, d.definitionId, d.scheduledFor === null ? null : d.scheduledFor.toISOString(), d.decision, d.runId ?? null],
  );
}
