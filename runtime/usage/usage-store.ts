import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { TRUNC_UNIT, windowStart, type UsageWindow } from './windows.js';

const S = PLATFORM_SCHEMA;

/** One usage event as the routes answer it (CONTRACT: Usage and quotas). */
export interface UsageEventView {
  id: string;
  kind: string;
  quantity: number;
  at: string;
  operationId: string;
  correlationId: string;
  dimensions?: Record<string, string>;
}

export interface UsageEventQuery {
  kind: string | null;
  operationId: string | null;
  from: string | null;
  to: string | null;
  /** Position of the last event of the previous page: (at, id). */
  after: { at: string; id: string } | null;
  pageSize: number;
}

interface EventRow { id: string; kind: string; quantity: string | number; at: string | Date; operation_id: string; correlation_id: string; dimensions: Record<string, string> | string | null }

const iso = (v: string | Date): string => (v instanceof Date ? v : new Date(v)).toISOString();

function view(r: EventRow): UsageEventView {
  const dims = typeof r.dimensions === 'string' ? (JSON.parse(r.dimensions) as Record<string, string>) : r.dimensions;
  return {
    id: String(r.id), kind: r.kind, quantity: Number(r.quantity), at: iso(r.at), operationId: r.operation_id, correlationId: r.correlation_id,
    ...(dims === null ? {} : { dimensions: dims }),
  };
}

/** A project's events in (at, id) order, after a position; `more` when another page exists. Served by (project_id, at, id). */
export async function listUsageEvents(db: SqlExecutor, projectId: string, q: UsageEventQuery): Promise<{ rows: UsageEventView[]; more: boolean }> {
  const params: unknown[] = [projectId];
  const where = ['project_id = $1'];
  const add = (cond: (n: string) => string, v: unknown): void => {
    params.push(v);
    where.push(cond(`$${params.length}`));
  };
  if (q.kind !== null) add((p) => `kind = ${p}`, q.kind);
  if (q.operationId !== null) add((p) => `operation_id = ${p}`, q.operationId);
  if (q.from !== null) add((p) => `at >= ${p}::timestamptz`, q.from);
  if (q.to !== null) add((p) => `at < ${p}::timestamptz`, q.to);
  if (q.after !== null) {
    params.push(q.after.at, q.after.id);
    where.push(`(at, id) > ($${params.length - 1}::timestamptz, $${params.length}::bigint)`);
  }
  const res = await db.query<EventRow>(
    `SELECT id::text AS id, kind, quantity::text AS quantity, at, operation_id, correlation_id, dimensions
     FROM ${S}.usage_events WHERE ${where.join(' AND ')} ORDER BY at, id LIMIT ${q.pageSize + 1}`,
    params,
  );
  const more = res.rows.length > q.pageSize;
  return { rows: res.rows.slice(0, q.pageSize).map(view), more };
}

/**
 * Units of `kind` the project used since `since` (inclusive), as written to
 * usage_events (not counting events still buffered on some node). One
 * index-served aggregate over (project_id, kind, at). With `dimensions`, only
 * events whose dimensions contain every given pair count.
 */
export async function usageSince(db: SqlExecutor, projectId: string, kind: string, since: Date | string, dimensions?: Readonly<Record<string, string>>): Promise<number> {
  const params: unknown[] = [projectId, kind, since instanceof Date ? since.toISOString() : since];
  let extra = '';
  if (dimensions !== undefined && Object.keys(dimensions).length > 0) {
    params.push(JSON.stringify(dimensions));
    extra = ' AND dimensions @> $4::jsonb';
  }
  const res = await db.query<{ used: string | null }>(
    `SELECT COALESCE(sum(quantity), 0)::text AS used FROM ${S}.usage_events WHERE project_id = $1 AND kind = $2 AND at >= $3::timestamptz${extra}`,
    params,
  );
  return Number(res.rows[0]?.used ?? 0);
}

/** Units of `kind` used in the current `window` (UTC) containing `now`: usageSince from the window's start. */
export function usageInWindow(db: SqlExecutor, projectId: string, kind: string, window: UsageWindow, now: Date = new Date(), dimensions?: Readonly<Record<string, string>>): Promise<number> {
  return usageSince(db, projectId, kind, windowStart(window, now), dimensions);
}

export interface RollupView {
  kind: string;
  window: UsageWindow;
  windowStart: string;
  quantity: number;
}

/**
 * A project's usage per kind and window start, summed over dimensions: the
 * rolled-up rows plus the events after the rollup's high-water mark, in one
 * statement (one snapshot: the mark and the rollups it covers commit
 * together), so totals always equal the events.
 */
export async function readRollups(db: SqlExecutor, projectId: string, window: UsageWindow, kind: string | null, from: string | null, to: string | null): Promise<RollupView[]> {
  const params: unknown[] = [projectId, window, TRUNC_UNIT[window]];
  const kindCond = kind === null ? '' : (params.push(kind), ` AND kind = $${params.length}`);
  const outer: string[] = [];
  if (from !== null) outer.push(`window_start >= $${params.push(from)}::timestamptz`);
  if (to !== null) outer.push(`window_start < $${params.push(to)}::timestamptz`);
  const res = await db.query<{ kind: string; window_start: string | Date; quantity: string }>(
    `SELECT kind, window_start, sum(q)::text AS quantity FROM (
       SELECT kind, window_start, quantity AS q FROM ${S}.usage_rollups WHERE project_id = $1 AND time_window = $2${kindCond}
       UNION ALL
       SELECT kind, date_trunc($3, at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', quantity FROM ${S}.usage_events
       WHERE project_id = $1 AND id > (SELECT last_id FROM ${S}.usage_rollup_cursor WHERE id = 1)${kindCond}
     ) x ${outer.length === 0 ? '' : `WHERE ${outer.join(' AND ')}`}
     GROUP BY kind, window_start ORDER BY window_start, kind`,
    params,
  );
  return res.rows.map((r) => ({ kind: r.kind, window, windowStart: iso(r.window_start), quantity: Number(r.quantity) }));
}
