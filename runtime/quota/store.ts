import { PLATFORM_SCHEMA as S, type SqlExecutor } from '../../storage/index.js';
import type { QuotaFields } from './body.js';
import type { QuotaMode } from './catalog.js';

/** A stored quota, as the routes answer it. */
export interface QuotaRecord extends QuotaFields {
  id: string;
  tenantId: string;
  projectId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

interface QuotaDbRow {
  id: string; tenant_id: string; project_id: string; kind: string; quota_limit: string | number; mode: string;
  time_window: string; dimensions: Record<string, string> | string; state: string; created_at: Date | string; updated_at: Date | string;
}

const COLS = 'id, tenant_id, project_id, kind, quota_limit, mode, time_window, dimensions, state, created_at, updated_at';
const iso = (v: Date | string): string => (v instanceof Date ? v : new Date(v)).toISOString();

function toRecord(r: QuotaDbRow): QuotaRecord {
  return {
    id: r.id, tenantId: r.tenant_id, projectId: r.project_id, kind: r.kind, limit: Number(r.quota_limit), mode: r.mode as QuotaMode,
    window: r.time_window, dimensions: typeof r.dimensions === 'string' ? JSON.parse(r.dimensions) : r.dimensions,
    state: r.state, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at),
  };
}

/** A project's quotas, oldest first; `limit` rows at most. */
export async function listQuotas(db: SqlExecutor, projectId: string, limit = 1000): Promise<QuotaRecord[]> {
  const r = await db.query<QuotaDbRow>(`SELECT ${COLS} FROM ${S}.quotas WHERE project_id = $1 ORDER BY created_at, id LIMIT $2`, [projectId, limit]);
  return r.rows.map(toRecord);
}

/** One quota of the project; null when missing or another project's (isolation). */
export async function readQuota(db: SqlExecutor, projectId: string, quotaId: string): Promise<QuotaRecord | null> {
  const r = await db.query<QuotaDbRow>(`SELECT ${COLS} FROM ${S}.quotas WHERE id = $1 AND project_id = $2`, [quotaId, projectId]);
  return r.rows[0] === undefined ? null : toRecord(r.rows[0]);
}

/** The project owning a quota id (PATCH by id with scope headers checks it against the header's project). */
export async function quotaProject(db: SqlExecutor, quotaId: string): Promise<string | null> {
  const r = await db.query<{ project_id: string }>(`SELECT project_id FROM ${S}.quotas WHERE id = $1`, [quotaId]);
  return r.rows[0]?.project_id ?? null;
}

export async function insertQuota(db: SqlExecutor, id: string, tenantId: string, projectId: string, f: QuotaFields): Promise<QuotaRecord> {
  const r = await db.query<QuotaDbRow>(
    `INSERT INTO ${S}.quotas (id, tenant_id, project_id, kind, quota_limit, mode, time_window, dimensions) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb) RETURNING ${COLS}`,
    [id, tenantId, projectId, f.kind, f.limit, f.mode, f.window, JSON.stringify(f.dimensions)],
  );
  return toRecord(r.rows[0]!);
}

/** Replaces a quota's fields; a changed kind, window or dimensions drops its counters (they counted something else). */
export async function updateQuota(db: SqlExecutor, projectId: string, quotaId: string, f: QuotaFields): Promise<QuotaRecord | null> {
  const before = await readQuota(db, projectId, quotaId);
  if (before === null) return null;
  const r = await db.query<QuotaDbRow>(
    `UPDATE ${S}.quotas SET kind = $3, quota_limit = $4, mode = $5, time_window = $6, dimensions = $7::jsonb, updated_at = now() WHERE id = $1 AND project_id = $2 RETURNING ${COLS}`,
    [quotaId, projectId, f.kind, f.limit, f.mode, f.window, JSON.stringify(f.dimensions)],
  );
  if (counterSignature(before) !== counterSignature(f)) await db.query(`DELETE FROM ${S}.quota_usage WHERE quota_id = $1`, [quotaId]);
  return r.rows[0] === undefined ? null : toRecord(r.rows[0]);
}

export async function deleteQuota(db: SqlExecutor, projectId: string, quotaId: string): Promise<boolean> {
  const r = await db.query(`DELETE FROM ${S}.quotas WHERE id = $1 AND project_id = $2 RETURNING id`, [quotaId, projectId]);
  return r.rows.length > 0;
}

/** What a quota's counter counts: the counter is kept across a change of limit or mode, reset on any other change. */
export function counterSignature(f: Pick<QuotaFields, 'kind' | 'window' | 'dimensions'>): string {
  const dims = Object.keys(f.dimensions).sort().map((k) => `${k}=${f.dimensions[k]}`).join('&');
  return `${f.kind}|${f.window}|${dims}`;
}
