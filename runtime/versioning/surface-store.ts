import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { UUID_TEXT } from '../control/rows.js';

const S = PLATFORM_SCHEMA;

/** An installable surface of a project (spec: Other lifecycles; states decided in docs/versioning-and-records.md). */
export interface SurfaceRecord {
  id: string;
  projectId: string;
  name: string;
  kind: string;
  version: string;
  state: SurfaceState;
  installed: boolean;
  installedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type SurfaceState = 'registered' | 'installed' | 'suspended' | 'uninstalled';
export type SurfaceAction = 'install' | 'uninstall' | 'upgrade' | 'suspend' | 'resume';

const COLUMNS = `id, project_id AS "projectId", name, kind, version, state, state IN ('installed', 'suspended') AS installed,
  installed_at AS "installedAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** Which states each action leaves from, and where it goes (upgrade keeps the state). */
const MOVES: Record<SurfaceAction, { from: readonly SurfaceState[]; to: SurfaceState | null; reason: string }> = {
  install: { from: ['registered', 'uninstalled'], to: 'installed', reason: 'Surface.AlreadyInstalled' },
  uninstall: { from: ['installed', 'suspended'], to: 'uninstalled', reason: 'Surface.NotInstalled' },
  upgrade: { from: ['installed', 'suspended'], to: null, reason: 'Surface.NotInstalled' },
  suspend: { from: ['installed'], to: 'suspended', reason: 'Surface.NotInstalledOrSuspended' },
  resume: { from: ['suspended'], to: 'installed', reason: 'Surface.NotSuspended' },
};

export async function readSurface(db: SqlExecutor, projectId: string, id: string): Promise<SurfaceRecord | null> {
  if (!UUID_TEXT.test(id)) return null;
  const res = await db.query<SurfaceRecord>(`SELECT ${COLUMNS} FROM ${S}.surfaces WHERE project_id = $1 AND id = $2::uuid`, [projectId, id.toLowerCase()]);
  return res.rows[0] ?? null;
}

export async function listSurfaces(db: SqlExecutor, projectId: string): Promise<SurfaceRecord[]> {
  return (await db.query<SurfaceRecord>(`SELECT ${COLUMNS} FROM ${S}.surfaces WHERE project_id = $1 ORDER BY created_at, id LIMIT 1000`, [projectId])).rows;
}

export async function insertSurface(db: SqlClient, projectId: string, s: { name: string; kind: string; version: string }): Promise<SurfaceRecord> {
  try {
    const res = await db.query<SurfaceRecord>(
      `INSERT INTO ${S}.surfaces (id, project_id, name, kind, version, state) VALUES ($1, $2, $3, $4, $5, 'registered') RETURNING ${COLUMNS}`,
      [randomUUID(), projectId, s.name, s.kind, s.version],
    );
    return res.rows[0]!;
  } catch (err) {
    if (sqlstateOf(err) === SQLSTATE.UNIQUE_VIOLATION) throw conflict('Surface.NameTaken', `surface name '${s.name}' is taken in this project`, 'name');
    throw err;
  }
}

/** One lifecycle move; 409 from a state the action does not leave from (nothing changes). */
export async function moveSurface(db: SqlClient, projectId: string, id: string, action: SurfaceAction, version?: string): Promise<SurfaceRecord> {
  const cur = await readSurface(db, projectId, id);
  if (cur === null) throw notFound('Surface.NotFound', 'surface not found');
  const move = MOVES[action];
  if (!move.from.includes(cur.state)) throw conflict(move.reason, `cannot ${action} a surface that is ${cur.state}`);
  const res = await db.query<SurfaceRecord>(
    `UPDATE ${S}.surfaces SET state = COALESCE($3, state), version = COALESCE($4, version),
       installed_at = CASE WHEN $3 = 'installed' AND state <> 'suspended' THEN now() WHEN $3 = 'uninstalled' THEN NULL ELSE installed_at END,
       updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [projectId, cur.id, move.to, version ?? null],
  );
  return res.rows[0]!;
}
