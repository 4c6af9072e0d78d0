import { PLATFORM_SCHEMA, SQLSTATE, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import type { ProjectModel } from '../publication/model.js';
import { leaseUntil, type DriverLease } from './deployment-lease.js';

const S = PLATFORM_SCHEMA;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type DeploymentState = 'pending' | 'ramping' | 'baking' | 'succeeded' | 'failed' | 'rolledBack';
export const ACTIVE_STATES: readonly DeploymentState[] = ['pending', 'ramping', 'baking'];

export interface DeploymentRow {
  id: string;
  environment: string;
  target_branch: string;
  target_version: string;
  from_version: string;
  state: DeploymentState;
  serving_version: string;
  created_at: string;
}

const COLUMNS = 'id, environment, target_branch, target_version, from_version, state, serving_version, created_at';

/** CONTRACT's deployment record (Control plane, "Deployments"), exactly its fields. */
export const deploymentRecord = (r: DeploymentRow): Record<string, unknown> => ({
  id: r.id,
  state: r.state,
  environment: r.environment,
  target: { branch: r.target_branch, publicationVersion: Number(r.target_version) },
  servingVersion: Number(r.serving_version),
  createdAt: new Date(r.created_at).toISOString(),
});

export async function requireDeployment(db: SqlExecutor, projectId: string, id: string): Promise<DeploymentRow> {
  const res = UUID.test(id) ? await db.query<DeploymentRow>(`SELECT ${COLUMNS} FROM ${S}.deployments WHERE project_id = $1 AND id = $2`, [projectId, id]) : { rows: [] };
  if (res.rows[0] === undefined) throw notFound('Deployment.NotFound', 'deployment not found');
  return res.rows[0];
}

export interface NewDeployment {
  id: string;
  projectId: string;
  environment: string;
  targetBranch: string;
  targetVersion: number;
  fromVersion: number;
  ramp: number[] | null;
  bake: number;
  /** The accepting node drives it: its lease starts with the row. */
  lease: DriverLease;
}

/** Inserts a pending deployment; the partial unique index makes a second in-flight one of the environment 409, on any node. */
export async function insertDeployment(db: SqlClient, d: NewDeployment): Promise<DeploymentRow> {
  try {
    const res = await db.query<DeploymentRow>(
      `INSERT INTO ${S}.deployments (id, project_id, environment, target_branch, target_version, from_version, ramp, bake_seconds, state, serving_version, driver, lease_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, 'pending', $6, $9, ${leaseUntil('$10')}) RETURNING ${COLUMNS}`,
      [d.id, d.projectId, d.environment, d.targetBranch, d.targetVersion, d.fromVersion, d.ramp === null ? null : JSON.stringify(d.ramp), d.bake, d.lease.holder, d.lease.ttlMs],
    );
    return res.rows[0]!;
  } catch (err) {
    if ((err as { code?: string }).code === SQLSTATE.UNIQUE_VIOLATION) throw conflict('Deployment.InProgress', 'another deployment of this environment is in progress');
    throw err;
  }
}

/**
 * Moves an in-flight deployment that `lease` drives to `state` and renews the lease; false
 * once it left the in-flight states (rolled back, or ended by another node's recovery).
 */
export async function advance(db: SqlExecutor, id: string, lease: DriverLease, state: DeploymentState, servingVersion?: number): Promise<boolean> {
  const res = await db.query(
    `UPDATE ${S}.deployments SET state = $2, serving_version = COALESCE($3, serving_version), lease_expires_at = ${leaseUntil('$5')}, updated_at = now()
     WHERE id = $1 AND driver = $4 AND state IN ('pending', 'ramping', 'baking')`,
    [id, state, servingVersion ?? null, lease.holder, lease.ttlMs],
  );
  return (res.rowCount ?? 0) > 0;
}

/** A stored publication a deployment can pin. */
export interface PublicationRef {
  branch: string;
  version: number;
  model: ProjectModel;
}

/** A publication of the project; a branch copy shares its base's version number, so `prefer`'s own row wins. */
export async function publicationOf(db: SqlExecutor, projectId: string, version: number, prefer = 'main'): Promise<PublicationRef | null> {
  const res = await db.query<{ branch: string; model: ProjectModel }>(
    `SELECT branch, model FROM ${S}.publications WHERE project_id = $1 AND version = $2 ORDER BY (branch = $3) DESC, branch LIMIT 1`, [projectId, version, prefer],
  );
  const row = res.rows[0];
  return row === undefined ? null : { branch: row.branch, version, model: row.model };
}

export interface Pin {
  branch: string;
  version: number;
  /** main's head when pinned: once main's head moves, production serves the head again. */
  head: number;
  ramp: { branch: string; version: number; percent: number } | null;
}

export async function writePin(db: SqlExecutor, projectId: string, environment: string, p: Pin): Promise<void> {
  await db.query(
    `INSERT INTO ${S}.environments (project_id, name, pinned_branch, pinned_version, pinned_head, ramp_branch, ramp_version, ramp_percent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (project_id, name) DO UPDATE SET pinned_branch = $3, pinned_version = $4, pinned_head = $5, ramp_branch = $6, ramp_version = $7, ramp_percent = $8, updated_at = now()`,
    [projectId, environment, p.branch, p.version, p.head, p.ramp?.branch ?? null, p.ramp?.version ?? null, p.ramp?.percent ?? 0],
  );
}
