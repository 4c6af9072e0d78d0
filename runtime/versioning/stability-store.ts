import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

export const STABILITIES = ['Experimental', 'Beta', 'Stable', 'Deprecated', 'Retired'] as const;
export type Stability = (typeof STABILITIES)[number];

/** An announced stability of one exposure binding (CONTRACT: Versioning). A binding without one is Stable. */
export interface StabilityRecord {
  bindingId: string;
  stability: Stability;
  replacement: string | null;
  sunsetAt: string | null;
  announcedAt: string;
}

const COLUMNS = `binding_id AS "bindingId", stability, replacement, sunset_at AS "sunsetAt", announced_at AS "announcedAt"`;

const iso = (r: StabilityRecord): StabilityRecord => ({
  ...r,
  sunsetAt: r.sunsetAt === null ? null : new Date(r.sunsetAt).toISOString(),
  announcedAt: new Date(r.announcedAt).toISOString(),
});

export async function listStability(db: SqlExecutor, projectId: string): Promise<StabilityRecord[]> {
  const res = await db.query<StabilityRecord>(`SELECT ${COLUMNS} FROM ${S}.binding_stability WHERE project_id = $1 ORDER BY announced_at, binding_id`, [projectId]);
  return res.rows.map(iso);
}

/** Announcing Stable removes the announcement (the default state); any other state replaces the binding's row. */
export async function writeStability(db: SqlClient, projectId: string, a: Omit<StabilityRecord, 'announcedAt'>): Promise<StabilityRecord> {
  if (a.stability === 'Stable') {
    await db.query(`DELETE FROM ${S}.binding_stability WHERE project_id = $1 AND binding_id = $2`, [projectId, a.bindingId]);
    return { ...a, announcedAt: new Date().toISOString() };
  }
  const res = await db.query<StabilityRecord>(
    `INSERT INTO ${S}.binding_stability (project_id, binding_id, stability, replacement, sunset_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (project_id, binding_id) DO UPDATE SET stability = EXCLUDED.stability, replacement = EXCLUDED.replacement,
       sunset_at = EXCLUDED.sunset_at, announced_at = now()
     RETURNING ${COLUMNS}`,
    [projectId, a.bindingId, a.stability, a.replacement, a.sunsetAt],
  );
  return iso(res.rows[0]!);
}
