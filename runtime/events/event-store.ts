import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { parseFlatFilter } from '../filter/flat-filter.js';

const S = PLATFORM_SCHEMA;

/** The spec's event envelope. */
export interface EventEnvelope {
  id: string;
  type: string;
  occurredAt: string;
  tenantId: string;
  projectId: string;
  publicationVersion: number;
  correlationId: string;
  data: Record<string, unknown>;
}

const COLUMNS = `seq, id, type, occurred_at AS "occurredAt", tenant_id AS "tenantId", project_id AS "projectId", publication_version AS "publicationVersion", correlation_id AS "correlationId", data`;

type Row = EventEnvelope & { seq: string };

const toEnvelope = ({ seq: _seq, ...e }: Row): EventEnvelope => ({ ...e, publicationVersion: Number(e.publicationVersion) });

export interface EventQuery {
  type: string | null;
  typePrefix: string | null;
  entity: string | null;
  since: string | null;
  until: string | null;
  correlationId: string | null;
  afterSeq: string | null;
  pageSize: number;
}

const FILTER_KEYS = ['type', 'entity', 'since', 'until', 'correlationId'];

/** Parses the events `filter` JSON: `{ type?, entity?, since?, until?, correlationId? }`; `type` may end in `.*` for a prefix. */
export function parseEventFilter(text: string | undefined): Pick<EventQuery, 'type' | 'typePrefix' | 'entity' | 'since' | 'until' | 'correlationId'> {
  const out = { type: null as string | null, typePrefix: null as string | null, entity: null as string | null, since: null as string | null, until: null as string | null, correlationId: null as string | null };
  const r = parseFlatFilter(text, FILTER_KEYS, 'event');
  if (r.type !== undefined) {
    if (r.type.endsWith('.*')) out.typePrefix = r.type.slice(0, -1);
    else out.type = r.type;
  }
  out.entity = r.entity ?? null;
  out.since = r.since ?? null;
  out.until = r.until ?? null;
  out.correlationId = r.correlationId ?? null;
  return out;
}

/** One page of a project's events in log order; returns the last seq for the next cursor. */
export async function listEvents(db: SqlExecutor, projectId: string, q: EventQuery): Promise<{ events: EventEnvelope[]; lastSeq: string | null; more: boolean }> {
  const params: unknown[] = [projectId];
  const where = ['project_id = $1'];
  const add = (sql: string, v: unknown): void => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (q.type !== null) add('type = ?', q.type);
  if (q.typePrefix !== null) add(`left(type, ${q.typePrefix.length}) = ?`, q.typePrefix);
  if (q.entity !== null) add('entity = ?', q.entity);
  if (q.since !== null) add('occurred_at >= ?::timestamptz', q.since);
  if (q.until !== null) add('occurred_at < ?::timestamptz', q.until);
  if (q.correlationId !== null) add('correlation_id = ?', q.correlationId);
  if (q.afterSeq !== null) add('seq > ?::bigint', q.afterSeq);
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM ${S}.events WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${q.pageSize + 1}`, params);
  const more = res.rows.length > q.pageSize;
  const rows = more ? res.rows.slice(0, q.pageSize) : res.rows;
  return { events: rows.map(toEnvelope), lastSeq: rows.length === 0 ? null : rows[rows.length - 1]!.seq, more };
}

export async function readEvent(db: SqlExecutor, projectId: string, id: string): Promise<EventEnvelope | null> {
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM ${S}.events WHERE project_id = $1 AND id = $2::uuid`, [projectId, id]);
  return res.rows[0] === undefined ? null : toEnvelope(res.rows[0]);
}

/** A project's events after `afterSeq` in log order, each with its seq (the tail's resumable position). */
export async function eventsAfter(db: SqlExecutor, projectId: string, afterSeq: string, limit: number): Promise<Array<{ seq: string; event: EventEnvelope }>> {
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM ${S}.events WHERE project_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT ${limit}`, [projectId, afterSeq]);
  return res.rows.map((r) => ({ seq: r.seq, event: toEnvelope(r) }));
}

/** The last seq of a project's events ('0' when it has none). */
export async function lastEventSeq(db: SqlExecutor, projectId: string): Promise<string> {
  const res = await db.query<{ seq: string | null }>(`SELECT max(seq) AS seq FROM ${S}.events WHERE project_id = $1`, [projectId]);
  return res.rows[0]?.seq ?? '0';
}
