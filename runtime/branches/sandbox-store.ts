import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

/** CONTRACT "Sandboxes": `{ id, branch, sourceBranch, seedFrom, expiresAt, createdAt }`. */
export interface SandboxRecord {
  id: string;
  branch: string;
  sourceBranch: string;
  seedFrom: string | null;
  expiresAt: string;
  createdAt: string;
}

export interface SandboxRow {
  id: string;
  branch: string;
  source_branch: string;
  seed_from: string | null;
  expires_at: string | Date;
  created_at: string | Date;
}

const iso = (v: string | Date): string => (v instanceof Date ? v : new Date(v)).toISOString();
const COLUMNS = 'id, branch, source_branch, seed_from, expires_at, created_at';

export const sandboxRecord = (r: SandboxRow): SandboxRecord => ({
  id: r.id, branch: r.branch, sourceBranch: r.source_branch, seedFrom: r.seed_from, expiresAt: iso(r.expires_at), createdAt: iso(r.created_at),
});

export async function readSandbox(db: SqlExecutor, projectId: string, id: string): Promise<SandboxRecord | null> {
  const res = await db.query<SandboxRow>(`SELECT ${COLUMNS} FROM ${S}.sandboxes WHERE project_id = $1 AND id = $2::uuid`, [projectId, id]);
  return res.rows[0] === undefined ? null : sandboxRecord(res.rows[0]);
}

/** Live sandboxes of a project (not yet past `expiresAt`), oldest first. */
export async function listSandboxes(db: SqlExecutor, projectId: string): Promise<SandboxRecord[]> {
  const res = await db.query<SandboxRow>(`SELECT ${COLUMNS} FROM ${S}.sandboxes WHERE project_id = $1 AND expires_at > now() ORDER BY created_at, id`, [projectId]);
  return res.rows.map(sandboxRecord);
}

/** Sandboxes past their `expiresAt`, every project, oldest first (the StagingTtlSweeper's work). */
export async function expiredSandboxes(db: SqlExecutor, limit: number): Promise<{ projectId: string; id: string }[]> {
  const res = await db.query<{ project_id: string; id: string }>(`SELECT project_id, id FROM ${S}.sandboxes WHERE expires_at <= now() ORDER BY expires_at LIMIT $1`, [limit]);
  return res.rows.map((r) => ({ projectId: r.project_id, id: r.id }));
}
