import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

/**
 * One rollup batch, in ONE statement: mark up to `batchRows` unrolled events
 * as rolled and add their quantities into usage_rollups for the hour, the
 * day and the calendar month (UTC) of their `at`, per project, kind and
 * dimensions. The statement commits or fails whole, so a restart (or a
 * second activation after a lease moved) never counts an event twice or
 * loses one: the `rolled` flag is the high-water mark, per event. A flag
 * rather than an id cursor because bigserial ids from concurrent flushes
 * (several nodes) commit out of order: a cursor could pass an id that
 * commits later.
 *
 * `dimensions::text` is jsonb's canonical text (keys sorted), so equal
 * dimensions share a key.
 */
const ROLLUP_SQL = `WITH taken AS (
    UPDATE ${S}.usage_events e SET rolled = true
    WHERE e.id IN (SELECT id FROM ${S}.usage_events WHERE NOT rolled LIMIT $1 FOR UPDATE SKIP LOCKED) AND NOT e.rolled
    RETURNING e.project_id, e.kind, e.at, e.quantity, COALESCE(e.dimensions::text, '') AS dkey),
  agg AS (
    SELECT t.project_id, t.kind, w.name AS time_window, date_trunc(w.unit, t.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS window_start,
      t.dkey, sum(t.quantity) AS quantity
    FROM taken t CROSS JOIN (VALUES ('hour', 'hour'), ('day', 'day'), ('calendar-month', 'month')) AS w(name, unit)
    GROUP BY 1, 2, 3, 4, 5),
  upserted AS (
    INSERT INTO ${S}.usage_rollups (project_id, kind, time_window, window_start, dimensions_key, quantity)
    SELECT project_id, kind, time_window, window_start, dkey, quantity FROM agg
    ON CONFLICT (project_id, time_window, kind, window_start, dimensions_key)
    DO UPDATE SET quantity = ${S}.usage_rollups.quantity + EXCLUDED.quantity
    RETURNING 1)
  SELECT (SELECT count(*) FROM taken)::int AS events`;

export interface RollupLimits {
  batchRows: number;
  pauseMs: number;
  budgetMs: number;
  stopped?: () => boolean;
}

export interface RollupRun {
  /** Events added into usage_rollups by this run. */
  rolled: number;
  batches: number;
  /** True when the budget ran out after a full batch: more events are waiting. */
  more: boolean;
}

/** Rolls up unrolled events in batches until none are left, the budget runs out or a shutdown starts. */
export async function rollUpUsage(db: SqlExecutor, limits: RollupLimits): Promise<RollupRun> {
  const started = Date.now();
  const run: RollupRun = { rolled: 0, batches: 0, more: false };
  for (;;) {
    const res = await db.query<{ events: number | string }>(ROLLUP_SQL, [limits.batchRows]);
    const n = Number(res.rows[0]?.events ?? 0);
    run.rolled += n;
    run.batches++;
    if (n < limits.batchRows) return run;
    if (limits.stopped?.() === true || Date.now() - started >= limits.budgetMs) {
      run.more = true;
      return run;
    }
    await new Promise((r) => setTimeout(r, limits.pauseMs));
  }
}
