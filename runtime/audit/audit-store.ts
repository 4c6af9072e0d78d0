import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';
import { parseFlatFilter } from '../filter/flat-filter.js';

const S = PLATFORM_SCHEMA;

/** An audit row as `/api/audit` and its tail show it. */
export interface AuditRecord {
  correlationId: string;
  at: string;
  actor: string;
  operationId: string;
  decision: string;
  reasonCode: string;
  status: number;
  /** Rows authored code left (runtime/authored/evidence.ts): `stage: 'authored'` and the handler's fields. */
  stage?: 'authored';
  handler?: string;
  sha256?: string;
  outcome?: string;
  cpuMs?: number;
  wallMs?: number;
  peakMemoryBytes?: number;
  stack?: string;
  level?: string;
  message?: string;
  fields?: Record<string, unknown>;
}

export interface AuditQuery {
  reasonCode: string | null;
  actor: string | null;
  /** Entity name: operation ids starting with `Entity.<E>.`. */
  entity: string | null;
  operationId: string | null;
  decision: string | null;
  correlationId: string | null;
  /** `authored`: only rows authored code left. */
  stage: string | null;
  since: string | null;
  until: string | null;
  afterSeq: string | null;
  pageSize: number;
}

const COLUMNS = `seq, correlation_id AS "correlationId", at, actor, operation_id AS "operationId", decision, reason_code AS "reasonCode", status, details->'authored' AS authored`;
type Row = Omit<AuditRecord, 'stage'> & { seq: string; authored: Record<string, unknown> | string | null };
const toRecord = ({ seq: _seq, authored, ...r }: Row): AuditRecord => {
  const rec: AuditRecord = { ...r, status: Number(r.status) };
  // PGlite and pg both parse jsonb; a driver handing back text is parsed here.
  return authored === null || authored === undefined ? rec : { ...rec, ...(typeof authored === 'string' ? JSON.parse(authored) as object : authored) };
};

const DECISIONS = ['Allow', 'Deny', 'Mask', 'Challenge', 'Error'];
const KEYS = ['reasonCode', 'actor', 'entity', 'operationId', 'decision', 'correlationId', 'stage', 'since', 'until'];
const STAGES = ['authored'];

/**
 * The audit `filter` JSON: `{ reasonCode?, actor?, entity?, operationId?,
 * decision?, correlationId?, stage?, since?, until? }`, all strings (`stage`: `authored`). `entity` selects
 * operation ids `Entity.<E>.*`; `decision` is Allow, Deny, Mask, Challenge or Error.
 */
export function parseAuditFilter(text: string | undefined): Omit<AuditQuery, 'afterSeq' | 'pageSize'> {
  const out: Omit<AuditQuery, 'afterSeq' | 'pageSize'> = { reasonCode: null, actor: null, entity: null, operationId: null, decision: null, correlationId: null, stage: null, since: null, until: null };
  for (const [k, v] of Object.entries(parseFlatFilter(text, KEYS, 'audit'))) {
    if (k === 'decision' && !DECISIONS.includes(v)) throw validationFailed('Filter.InvalidValue', `'decision' must be one of ${DECISIONS.join(', ')}`, 'filter.decision');
    if (k === 'stage' && !STAGES.includes(v)) throw validationFailed('Filter.InvalidValue', `'stage' must be one of ${STAGES.join(', ')}`, 'filter.stage');
    (out as unknown as Record<string, string>)[k] = v;
  }
  return out;
}

/** One page of a project's audit rows in write order; returns the last seq for the next cursor. */
export async function listAudit(db: SqlExecutor, projectId: string, q: AuditQuery): Promise<{ rows: AuditRecord[]; lastSeq: string | null; more: boolean }> {
  const params: unknown[] = [projectId];
  const where = ['project_id = $1'];
  const add = (sql: string, v: unknown): void => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (q.reasonCode !== null) add('reason_code = ?', q.reasonCode);
  if (q.actor !== null) add('actor = ?', q.actor);
  if (q.entity !== null) {
    const prefix = `Entity.${q.entity}.`;
    add(`left(operation_id, ${prefix.length}) = ?`, prefix);
  }
  if (q.operationId !== null) add('operation_id = ?', q.operationId);
  if (q.decision !== null) add('decision = ?', q.decision);
  if (q.correlationId !== null) add('correlation_id = ?', q.correlationId);
  if (q.stage === 'authored') where.push(`details->'authored' IS NOT NULL`);
  if (q.since !== null) add('at >= ?::timestamptz', q.since);
  if (q.until !== null) add('at < ?::timestamptz', q.until);
  if (q.afterSeq !== null) add('seq > ?::bigint', q.afterSeq);
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM ${S}.audit WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${q.pageSize + 1}`, params);
  const more = res.rows.length > q.pageSize;
  const rows = more ? res.rows.slice(0, q.pageSize) : res.rows;
  return { rows: rows.map(toRecord), lastSeq: rows.length === 0 ? null : rows[rows.length - 1]!.seq, more };
}

export async function auditAfter(db: SqlExecutor, projectId: string, afterSeq: string, limit: number): Promise<Array<{ seq: string; row: AuditRecord }>> {
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM ${S}.audit WHERE project_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT ${limit}`, [projectId, afterSeq]);
  return res.rows.map((r) => ({ seq: r.seq, row: toRecord(r) }));
}

export async function lastAuditSeq(db: SqlExecutor): Promise<string> {
  const res = await db.query<{ seq: string | null }>(`SELECT max(seq) AS seq FROM ${S}.audit`);
  return res.rows[0]?.seq ?? '0';
}

/**
 * Follows a project's audit rows after `afterSeq` by polling (the buffered
 * writer flushes every 50 ms). Returns the stop function.
 */
export function followAudit(db: SqlExecutor, projectId: string, afterSeq: string, onRow: (seq: string, row: AuditRecord) => boolean, onError: (err: unknown) => void, pollMs = 100): () => void {
  let last = afterSeq;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  const tick = async (): Promise<void> => {
    timer = null;
    try {
      for (;;) {
        if (closed) return;
        const page = await auditAfter(db, projectId, last, 200);
        for (const { seq, row } of page) {
          if (closed) return;
          last = seq;
          if (!onRow(seq, row)) {
            closed = true;
            return;
          }
        }
        if (page.length < 200) break;
      }
    } catch (err) {
      if (!closed) {
        closed = true;
        onError(err);
      }
      return;
    }
    if (!closed) timer = setTimeout(() => void tick(), pollMs);
  };
  void tick();
  return () => {
    closed = true;
    if (timer !== null) clearTimeout(timer);
  };
}
