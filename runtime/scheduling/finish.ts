import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { retryDelayMs } from './backoff.js';
import { recordRunEvent } from './run-events.js';
import type { AttemptState, RetryPolicy, RunState } from './types.js';

const S = PLATFORM_SCHEMA;

/** An attempt's or run's `error`: the canonical error of what ended it. */
export interface RunError {
  code: string;
  reasonCode: string;
  message: string;
}

/** What an ending writes besides states: its event's correlation id and publication version. */
export interface Ending {
  correlationId: string;
  publicationVersion: number | null;
}

/**
 * Ends an attempt, only if it is still `running`: the fence between a late
 * finisher and the dispatcher that marked it `lost` (whichever updates the row
 * first wins; the other's conditional update matches nothing). True: this
 * caller ended it and goes on to settle its run.
 */
export async function closeAttempt(tx: SqlExecutor, attemptId: string, state: Exclude<AttemptState, 'running'>, error: RunError | null): Promise<boolean> {
  const res = await tx.query(
    `UPDATE ${S}.task_attempts SET state = $2, finished_at = now(), error = $3::jsonb WHERE id = $1 AND state = 'running' RETURNING id`,
    [attemptId, state, error === null ? null : JSON.stringify(error)],
  );
  return res.rows.length > 0;
}

/** The run of a successful attempt: `succeeded` with the handler's return value, and its event. */
export async function succeedRun(tx: SqlExecutor, runId: string, output: unknown, e: Ending): Promise<void> {
  await tx.query(
    `UPDATE ${S}.task_runs SET state = 'succeeded', output = $2::jsonb, error = NULL, finished_at = now() WHERE id = $1 AND state = 'running'`,
    [runId, JSON.stringify(output ?? null)],
  );
  await recordRunEvent(tx, runId, 'succeeded', e.correlationId, e.publicationVersion);
}

/**
 * The run of an attempt that did not succeed (it failed, timed out, was lost
 * or cancelled): `cancelled` when a cancel was asked for; else queued again
 * while attempts remain (after the retry backoff, or at once: `retryNow`, a
 * lost attempt), else `failed` with the attempt's error. Finished states get
 * their event. Answers the run's new state (null: it was no longer running).
 */
export async function settleRun(tx: SqlExecutor, runId: string, error: RunError, e: Ending, retryNow = false): Promise<RunState | null> {
  const res = await tx.query<{ attempts: number; max_attempts: number; cancel_requested: boolean; retry: RetryPolicy }>(
    `SELECT r.attempts, r.max_attempts, r.cancel_requested, d.retry FROM ${S}.task_runs r JOIN ${S}.task_definitions d ON d.id = r.definition_id
     WHERE r.id = $1 AND r.state = 'running' FOR UPDATE OF r`,
    [runId],
  );
  const run = res.rows[0];
  if (run === undefined) return null;
  if (run.cancel_requested) return cancelRunning(tx, runId, e);
  const attempts = Number(run.attempts);
  if (attempts < Number(run.max_attempts)) {
    const delayMs = retryNow ? 0 : retryDelayMs(run.retry, attempts);
    await tx.query(`UPDATE ${S}.task_runs SET state = 'queued', due_at = now() + $2 * interval '1 millisecond' WHERE id = $1`, [runId, delayMs]);
    return 'queued';
  }
  await tx.query(`UPDATE ${S}.task_runs SET state = 'failed', error = $2::jsonb, finished_at = now() WHERE id = $1`, [runId, JSON.stringify(error)]);
  await recordRunEvent(tx, runId, 'failed', e.correlationId, e.publicationVersion);
  return 'failed';
}

/** A running run whose attempt was stopped on request: `cancelled`, and its event. */
async function cancelRunning(tx: SqlExecutor, runId: string, e: Ending): Promise<RunState> {
  await tx.query(`UPDATE ${S}.task_runs SET state = 'cancelled', finished_at = now() WHERE id = $1`, [runId]);
  await recordRunEvent(tx, runId, 'cancelled', e.correlationId, e.publicationVersion);
  return 'cancelled';
}
