import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

/**
 * Adds the next events after the high-water marks into usage_rollups (the
 * hour, the day and the calendar month, UTC, of their `at`, per project, kind
 * and dimensions) and moves the marks past them, in one statement: it commits
 * or fails whole, so a restart or a second activation after a lease moved
 * never counts an event twice or skips one. `dimensions::text` is jsonb's
 * canonical text (keys sorted), so equal dimensions share a key.
 *
 * Two sources (docs/usage.md): usage_events after `last_id`, at most `$1`
 * of them; and the audit rows after `last_audit_seq`, a window of at most
 * `$2` rows by seq of which those carrying usage are taken. The audit mark
 * moves to the end of the window, past rows without usage too, so a run
 * never rescans them; the window bounds what one batch reads however few
 * rows carry usage.
 */
const ROLLUP_SQL = `WITH mark AS (SELECT last_id, last_audit_seq FROM ${S}.usage_rollup_cursor WHERE id = 1),
  taken_events AS (
    SELECT e.id, e.project_id, e.kind, e.at, e.quantity, COALESCE(e.dimensions::text, '') AS dkey
    FROM ${S}.usage_events e, mark WHERE e.id > mark.last_id ORDER BY e.id LIMIT $1),
  audit_window AS (
    SELECT a.seq, a.project_id, a.usage_kind, a.at, a.usage_quantity, a.usage_dimensions
    FROM ${S}.audit a, mark WHERE a.seq > mark.last_audit_seq ORDER BY a.seq LIMIT $2),
  taken AS (
    SELECT project_id, kind, at, quantity, dkey FROM taken_events
    UNION ALL
    SELECT project_id, usage_kind, at, usage_quantity, COALESCE(usage_dimensions::text, '') FROM audit_window WHERE usage_kind IS NOT NULL),
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
    RETURNING 1),
  moved AS (
    UPDATE ${S}.usage_rollup_cursor SET
      last_id = COALESCE((SELECT max(id) FROM taken_events), last_id),
      last_audit_seq = COALESCE((SELECT max(seq) FROM audit_window), last_audit_seq)
    WHERE id = 1 AND (EXISTS (SELECT 1 FROM taken_events) OR EXISTS (SELECT 1 FROM audit_window))
    RETURNING last_id)
  SELECT (SELECT count(*) FROM taken)::int AS events, (SELECT count(*) FROM taken_events)::int AS from_events,
    (SELECT count(*) FROM audit_window)::int AS audit_rows`;

/** Audit rows one batch reads at most, per event it may take from usage_events. */
const AUDIT_WINDOW_PER_EVENT = 4;

/**
 * Why a lock: bigserial ids of concurrent flushes (several nodes, several
 * pooled connections) commit out of order, so a mark could pass an id whose
 * INSERT commits later, and that event would never be rolled up. SHARE ROW
 * EXCLUSIVE waits for the INSERTs in flight and holds new ones back until
 * this batch commits: every id at or below the new mark is then committed
 * and visible, and every later INSERT draws a higher id. Writers are the
 * buffered flushes (usage and audit), never a request, so they wait a
 * batch's few milliseconds; the mode also conflicts with itself, so two runs
 * never overlap. (The retention sweep's DELETE waits the same way.) The two
 * tables are always locked in this order.
 */
async function rollUpBatch(db: SqlClient, batchRows: number): Promise<{ events: number; full: boolean }> {
  return db.transaction(async (tx) => {
    await tx.query(`LOCK TABLE ${S}.usage_events IN SHARE ROW EXCLUSIVE MODE`);
    await tx.query(`LOCK TABLE ${S}.audit IN SHARE ROW EXCLUSIVE MODE`);
    const window = batchRows * AUDIT_WINDOW_PER_EVENT;
    const res = await tx.query<{ events: number | string; from_events: number | string; audit_rows: number | string }>(ROLLUP_SQL, [batchRows, window]);
    const r = res.rows[0];
    // Another batch is due while either source filled its share.
    return { events: Number(r?.events ?? 0), full: Number(r?.from_events ?? 0) >= batchRows || Number(r?.audit_rows ?? 0) >= window };
  });
}

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

/** Rolls up the events after the mark in batches until none are left, the budget runs out or a shutdown starts. */
export async function rollUpUsage(db: SqlClient, limits: RollupLimits): Promise<RollupRun> {
  const started = Date.now();
  const run: RollupRun = { rolled: 0, batches: 0, more: false };
  for (;;) {
    const batch = await rollUpBatch(db, limits.batchRows);
    run.rolled += batch.events;
    run.batches++;
    if (!batch.full) return run;
    if (limits.stopped?.() === true || Date.now() - started >= limits.budgetMs) {
      run.more = true;
      return run;
    }
    await new Promise((r) => setTimeout(r, limits.pauseMs));
  }
}
