import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient } from '../../storage/index.js';
import { SCHEDULING_TIMING, type RunCause, type RunContext } from './types.js';

const S = PLATFORM_SCHEMA;

/** A run a worker claimed, with its new attempt and what the attempt needs of its definition. */
export interface ClaimedAttempt {
  attemptId: string;
  number: number;
  runId: string;
  tenantId: string;
  projectId: string;
  branch: string;
  cause: RunCause;
  scheduledFor: string;
  input: unknown;
  context: RunContext | null;
  runCorrelationId: string;
  handler: string;
  timeoutSeconds: number;
}

interface ClaimRow {
  id: string; tenant_id: string; project_id: string; branch: string; cause: RunCause; scheduled_for: string | Date; attempts: number;
  input: unknown; context: RunContext | null; correlation_id: string; handler: string; timeout_seconds: number;
}

const claimed = (attemptId: string, run: ClaimRow): ClaimedAttempt => ({
  attemptId, number: Number(run.attempts), runId: run.id, tenantId: run.tenant_id, projectId: run.project_id, branch: run.branch, cause: run.cause,
  scheduledFor: new Date(run.scheduled_for).toISOString(), input: run.input, context: run.context, runCorrelationId: run.correlation_id,
  handler: run.handler, timeoutSeconds: Number(run.timeout_seconds),
});

/**
 * The claiming statement: up to `limit` of the oldest due queued runs not
 * asked to cancel (serial ones only, or only the others), skipping rows
 * another worker holds (SKIP LOCKED), become `running` (one more attempt,
 * `startedAt` on the first), each with a new attempt row leased to this node.
 * One statement: one round trip, and atomic like a transaction.
 */
const claimSql = (serial: boolean): string => `
  WITH due AS (
    SELECT r.id FROM ${S}.task_runs r
    WHERE r.state = 'queued' AND r.due_at <= now() AND NOT r.cancel_requested AND ${serial
      ? `r.serial AND NOT EXISTS (SELECT 1 FROM ${S}.task_runs o WHERE o.definition_id = r.definition_id AND o.serial AND o.state = 'running')`
      : 'NOT r.serial'}
    ORDER BY r.due_at, r.seq LIMIT $2 FOR UPDATE SKIP LOCKED
  ), run AS (
    UPDATE ${S}.task_runs r SET state = 'running', attempts = r.attempts + 1, started_at = COALESCE(r.started_at, now())
    FROM due WHERE r.id = due.id
    RETURNING r.id, r.seq, r.definition_id, r.tenant_id, r.project_id, r.branch, r.cause, r.scheduled_for, r.attempts, r.input, r.context, r.correlation_id
  ), attempt AS (
    INSERT INTO ${S}.task_attempts (id, run_id, project_id, number, node, lease_until)
    SELECT gen_random_uuid(), run.id, run.project_id, run.attempts, $1, now() + $3 * interval '1 millisecond' FROM run
    RETURNING id, run_id
  )
  SELECT attempt.id AS attempt_id, run.*, d.handler, d.timeout_seconds
  FROM attempt JOIN run ON run.id = attempt.run_id JOIN ${S}.task_definitions d ON d.id = run.definition_id
  ORDER BY run.seq`;
const CLAIM_RUNS = claimSql(false);
const CLAIM_SERIAL_RUN = claimSql(true);

async function claim(db: SqlClient, sql: string, nodeId: string, limit: number): Promise<ClaimedAttempt[]> {
  const res = await db.query<ClaimRow & { attempt_id: string }>(sql, [nodeId, limit, SCHEDULING_TIMING.leaseMs]);
  return res.rows.map((row) => claimed(row.attempt_id, row));
}

/** Claims up to `limit` due runs that are not serial (claimSql), in one statement. */
export function claimRuns(db: SqlClient, nodeId: string, limit: number): Promise<ClaimedAttempt[]> {
  return limit <= 0 ? Promise.resolve([]) : claim(db, CLAIM_RUNS, nodeId, limit);
}

/**
 * Claims one due serial run whose definition has none running (claimSql).
 * One per statement: the serial index refuses a second running run of a
 * definition, and that refusal must not undo other claims. Null: nothing to
 * claim. `contended`: the index refused it (another node started that
 * definition's run meanwhile); the next round looks again.
 */
export async function claimSerialRun(db: SqlClient, nodeId: string): Promise<ClaimedAttempt | null | 'contended'> {
  try {
    return (await claim(db, CLAIM_SERIAL_RUN, nodeId, 1))[0] ?? null;
  } catch (err) {
    if (sqlstateOf(err) === SQLSTATE.UNIQUE_VIOLATION) return 'contended';
    throw err;
  }
}

/** Extends this node's running attempts' leases; answers the ids still `running` (the others were marked lost: their work must stop). */
export async function renewLeases(db: SqlClient, attemptIds: string[]): Promise<Set<string>> {
  if (attemptIds.length === 0) return new Set();
  const res = await db.query<{ id: string }>(
    `UPDATE ${S}.task_attempts SET lease_until = now() + $2 * interval '1 millisecond' WHERE id = ANY($1::uuid[]) AND state = 'running' RETURNING id`,
    [attemptIds, SCHEDULING_TIMING.leaseMs],
  );
  return new Set(res.rows.map((r) => r.id));
}

/** Of these running attempts, the ones whose run was asked to cancel. */
export async function cancelRequested(db: SqlClient, attemptIds: string[]): Promise<string[]> {
  if (attemptIds.length === 0) return [];
  const res = await db.query<{ id: string }>(
    `SELECT a.id FROM ${S}.task_attempts a JOIN ${S}.task_runs r ON r.id = a.run_id WHERE a.id = ANY($1::uuid[]) AND r.cancel_requested`,
    [attemptIds],
  );
  return res.rows.map((r) => r.id);
}
