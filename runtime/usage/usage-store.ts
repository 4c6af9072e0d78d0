import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { TRUNC_UNIT, windowStart, type UsageWindow } from './windows.js';
import { AUDITED_USAGE_KINDS } from './meter.js';

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

/** Where an event is kept: `a` on the audit row of the operation that consumed, `e` in usage_events (docs/usage.md). */
export type UsageSource = 'a' | 'e';

/** A position in the listing's order (at, source, id): the last event of the previous page. */
export interface UsagePosition {
  at: string;
  src: UsageSource;
  id: string;
}

export interface UsageEventQuery {
  kind: string | null;
  operationId: string | null;
  from: string | null;
  to: string | null;
  after: UsagePosition | null;
  pageSize: number;
}

interface EventRow { src: UsageSource; id: string; kind: string; quantity: string | number; at: string | Date; operation_id: string; correlation_id: string; dimensions: Record<string, string> | string | null }

const iso = (v: string | Date): string => (v instanceof Date ? v : new Date(v)).toISOString();

/** A listed event and its position (the page cursor names the last one). */
export interface ListedUsageEvent { event: UsageEventView; position: UsagePosition }

function listed(r: EventRow): ListedUsageEvent {
  const dims = typeof r.dimensions === 'string' ? (JSON.parse(r.dimensions) as Record<string, string>) : r.dimensions;
  const at = iso(r.at);
  return {
    event: {
      id: `${r.src}${r.id}`, kind: r.kind, quantity: Number(r.quantity), at, operationId: r.operation_id, correlationId: r.correlation_id,
      ...(dims === null ? {} : { dimensions: dims }),
    },
    position: { at, src: r.src, id: String(r.id) },
  };
}

/**
 * One arm of the listing: the events of one source (and, on audit rows, one
 * kind, so the partial index (project_id, usage_kind, at, seq) serves the
 * order) after the position, at most `limit`. Positions order by (at, src,
 * id): within the cursor's instant this source's rows come after it when its
 * letter is greater, or when it is the cursor's source and the id is.
 */
function armSql(src: UsageSource, kind: string | null, q: UsageEventQuery, params: unknown[], limit: number): string {
  const p = (v: unknown): string => `$${params.push(v)}`;
  const audit = src === 'a';
  const [table, id, kindCol, qty, dims] = audit
    ? [`${S}.audit`, 'seq', 'usage_kind', 'usage_quantity', 'usage_dimensions']
    : [`${S}.usage_events`, 'id', 'kind', 'quantity', 'dimensions'];
  const where = [`project_id = $1`];
  if (kind !== null) where.push(`${kindCol} = ${p(kind)}`);
  if (q.operationId !== null) where.push(`operation_id = ${p(q.operationId)}`);
  if (q.from !== null) where.push(`at >= ${p(q.from)}::timestamptz`);
  if (q.to !== null) where.push(`at < ${p(q.to)}::timestamptz`);
  const a = q.after;
  if (a !== null) {
    if (a.src === src) where.push(`(at, ${id}) > (${p(a.at)}::timestamptz, ${p(a.id)}::bigint)`);
    else where.push(`at ${src > a.src ? '>=' : '>'} ${p(a.at)}::timestamptz`);
  }
  return `(SELECT '${src}'::text AS src, ${id}::text AS id, ${kindCol} AS kind, ${qty}::text AS quantity, at, operation_id, correlation_id, ${dims} AS dimensions
    FROM ${table} WHERE ${where.join(' AND ')} ORDER BY at, ${id} LIMIT ${limit})`;
}

/**
 * A project's events in (at, source, id) order, after a position; `more` when
 * another page exists. One statement: an arm per source (per kind on audit
 * rows), each an index range of at most a page, merged by the outer sort.
 */
export async function listUsageEvents(db: SqlExecutor, projectId: string, q: UsageEventQuery): Promise<{ rows: ListedUsageEvent[]; more: boolean }> {
  const params: unknown[] = [projectId];
  const limit = q.pageSize + 1;
  const auditKinds = q.kind === null ? AUDITED_USAGE_KINDS : (AUDITED_USAGE_KINDS as readonly string[]).includes(q.kind) ? [q.kind] : [];
  const arms = [armSql('e', q.kind, q, params, limit), ...auditKinds.map((k) => armSql('a', k, q, params, limit))];
  const res = await db.query<EventRow>(`SELECT * FROM (${arms.join(' UNION ALL ')}) x ORDER BY at, src, id::bigint LIMIT ${limit}`, params);
  const more = res.rows.length > q.pageSize;
  return { rows: res.rows.slice(0, q.pageSize).map(listed), more };
}

/**
 * Units of `kind` the project used since `since` (inclusive), as written
 * (audit rows and usage_events, through usage_ledger; not counting what is
 * still buffered on some node). Each arm is one index range: (project_id,
 * usage_kind, at) on audit rows, (project_id, kind, at) on usage_events.
 * With `dimensions`, only events whose dimensions contain every given pair count.
 */
export async function usageSince(db: SqlExecutor, projectId: string, kind: string, since: Date | string, dimensions?: Readonly<Record<string, string>>): Promise<number> {
  const params: unknown[] = [projectId, kind, since instanceof Date ? since.toISOString() : since];
  let extra = '';
  if (dimensions !== undefined && Object.keys(dimensions).length > 0) {
    params.push(JSON.stringify(dimensions));
    extra = ' AND dimensions @> $4::jsonb';
  }
  const res = await db.query<{ used: string | null }>(
    `SELECT COALESCE(sum(quantity), 0)::text AS used FROM ${S}.usage_ledger WHERE project_id = $1 AND kind = $2 AND at >= $3::timestamptz${extra}`,
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
       SELECT kind, date_trunc($3, at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', quantity FROM ${S}.usage_ledger l, ${S}.usage_rollup_cursor m
       WHERE m.id = 1 AND project_id = $1 AND ((src = 'e' AND l.id > m.last_id) OR (src = 'a' AND l.id > m.last_audit_seq))${kindCond}
     ) x ${outer.length === 0 ? '' : `WHERE ${outer.join(' AND ')}`}
     GROUP BY kind, window_start ORDER BY window_start, kind`,
    params,
  );
  return res.rows.map((r) => ({ kind: r.kind, window, windowStart: iso(r.window_start), quantity: Number(r.quantity) }));
}
