import type { Logger } from '../log.js';
import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import { readHead } from '../control/schema-change.js';
import { publicationOf, writePin, type DeploymentState } from './deployment-store.js';
import { driverGoneSql, type DriverLease } from './deployment-lease.js';
import { readEnvironment, servableProblem } from './serving.js';

const S = PLATFORM_SCHEMA;

/** One in-flight deployment whose driver was gone, and how it ended. */
export interface RecoveredDeployment {
  projectId: string;
  id: string;
  environment: string;
  /** The state it was left in: `pending`, `ramping` or `baking`. */
  interrupted: DeploymentState;
  /** Always `rolledBack`: a deployment that lost its driver is reverted, never resumed. */
  state: 'rolledBack';
  /** What the environment serves afterwards: `fromVersion`, or main's head when that moved on. */
  servingVersion: number;
  /** The lost driver (`<nodeId>/<incarnation>`), null for rows from before migration 24. */
  driver: string | null;
}

export interface RecoveryDeps {
  db: SqlClient;
  lease: DriverLease;
  log: Logger;
  /** Drops the project's cached serving state on every node. */
  invalidate: (projectId: string) => void;
}

/** Narrows a pass to one project (and environment or deployment): the create and read routes. */
export interface RecoveryScope {
  projectId: string;
  environment?: string;
  id?: string;
}

interface InFlightRow {
  id: string;
  project_id: string;
  environment: string;
  state: DeploymentState;
  from_version: string;
  driver: string | null;
}

const IN_FLIGHT = `state IN ('pending', 'ramping', 'baking')`;

/**
 * Reverts one deployment whose driver is gone, in one transaction. The row is locked
 * first and the "driver gone" condition is checked under that lock, so a driver that is
 * alive (its lease renewed), a step it commits meanwhile, or another node recovering the
 * same deployment at the same moment all make this a no-op (null): one writer only.
 */
async function revert(deps: RecoveryDeps, d: InFlightRow): Promise<RecoveredDeployment | null> {
  return deps.db.transaction(async (tx) => {
    const locked = await tx.query<InFlightRow>(
      `SELECT id, project_id, environment, state, from_version, driver FROM ${S}.deployments
       WHERE id = $3 AND ${IN_FLIGHT} AND ${driverGoneSql('$1', '$2')} FOR UPDATE`,
      [deps.lease.nodeId, deps.lease.holder, d.id],
    );
    const row = locked.rows[0];
    if (row === undefined) return null;
    const head = await readHead(tx, row.project_id, 'main', false);
    const env = await readEnvironment(tx, row.project_id, row.environment);
    const fromVersion = Number(row.from_version);
    let servingVersion = head.version;
    // A pin made on main's current head is in effect (the deployment's, or the one before it
    // if it never stepped): pin fromVersion again, ramp cleared. If main's tables can no longer
    // serve it, main's head. A pin made on an older head is void already: production serves
    // main's head (a schema change on main deploys at once), so there is nothing to undo.
    if (env !== null && Number(env.pinned_head) === head.version) {
      const from = await publicationOf(tx, row.project_id, fromVersion, Number(env.pinned_version) === fromVersion ? env.pinned_branch : 'main');
      const back = from !== null && servableProblem(from.model, head.model) === null ? from : { branch: 'main', version: head.version };
      await writePin(tx, row.project_id, row.environment, { branch: back.branch, version: back.version, head: head.version, ramp: null });
      servingVersion = back.version;
    }
    await tx.query(
      `UPDATE ${S}.deployments SET state = 'rolledBack', serving_version = $2, ended_by = $3, updated_at = now() WHERE id = $1`,
      [row.id, servingVersion, `recovery:${deps.lease.holder}`],
    );
    return { projectId: row.project_id, id: row.id, environment: row.environment, interrupted: row.state, state: 'rolledBack', servingVersion, driver: row.driver };
  });
}

/**
 * Finds in-flight deployments whose driver is gone (docs/proposals-and-deployments.md
 * "Recovery") and reverts each to the version served before it. Safe on every node at
 * once: each revert re-checks the lease under the row lock.
 */
export async function recoverOrphanedDeployments(deps: RecoveryDeps, scope?: RecoveryScope): Promise<RecoveredDeployment[]> {
  const params: unknown[] = [deps.lease.nodeId, deps.lease.holder];
  let where = `${IN_FLIGHT} AND ${driverGoneSql('$1', '$2')}`;
  if (scope !== undefined) {
    params.push(scope.projectId);
    where += ` AND project_id = $${params.length}`;
    if (scope.environment !== undefined) where += ` AND environment = $${params.push(scope.environment)}`;
    if (scope.id !== undefined) where += ` AND id = $${params.push(scope.id)}`;
  }
  const found = await deps.db.query<InFlightRow>(`SELECT id, project_id, environment, state, from_version, driver FROM ${S}.deployments WHERE ${where} ORDER BY created_at LIMIT 100`, params);
  const out: RecoveredDeployment[] = [];
  for (const d of found.rows) {
    const r = await revert(deps, d);
    if (r === null) continue;
    deps.invalidate(r.projectId);
    deps.log.warn('deployment reverted: its driver was lost', { ...r });
    out.push(r);
  }
  return out;
}

/**
 * Runs recovery at node start and then every lease period, so a deployment whose node
 * died is reverted within about two lease periods even when no request touches it.
 */
export class DeploymentRecovery {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<RecoveredDeployment[]> | null = null;

  constructor(private readonly deps: RecoveryDeps) {}

  /** One pass now (at start, and for tests and operators); overlapping calls share the pass. */
  recoverNow(): Promise<RecoveredDeployment[]> {
    this.running ??= recoverOrphanedDeployments(this.deps).finally(() => (this.running = null));
    return this.running;
  }

  start(intervalMs = this.deps.lease.ttlMs): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      this.recoverNow().catch((err: unknown) => this.deps.log.warn('deployment recovery sweep failed', { error: err instanceof Error ? err.message : String(err) }));
    }, intervalMs);
    this.timer.unref();
  }

  /**
   * Stops the sweep and waits for a pass in flight (it may hold a transaction). A graceful
   * stop then reverts the deployments this node still drives, as a crash would, but now
   * rather than one lease later: their leases are ended and the same revert runs (the
   * driver's next step finds them no longer in flight and stops).
   */
  async stop(): Promise<RecoveredDeployment[]> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
    const { db, lease } = this.deps;
    const ended = await db.query(
      `UPDATE ${S}.deployments SET lease_expires_at = now() - interval '1 millisecond' WHERE driver = $1 AND ${IN_FLIGHT}`,
      [lease.holder],
    );
    return (ended.rowCount ?? 0) === 0 ? [] : recoverOrphanedDeployments(this.deps);
  }
}
