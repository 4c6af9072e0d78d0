import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { UUID_TEXT } from '../control/rows.js';
import { findFoundation, upgradeSteps } from './foundations.js';

const S = PLATFORM_SCHEMA;

export interface AdoptedFoundation { projectId: string; profileName: string; foundationVersion: string; adoptedAt: string }

export type PlanState = 'planned' | 'approved' | 'executed' | 'rolledBack';

export interface UpgradePlan {
  planId: string;
  projectId: string;
  profileName: string;
  fromVersion: string | null;
  toVersion: string;
  steps: Array<{ action: string; capability: string }>;
  state: PlanState;
  executionId: string | null;
  createdAt: string;
  updatedAt: string;
}

const PLAN_COLUMNS = `id AS "planId", project_id AS "projectId", profile_name AS "profileName", from_version AS "fromVersion", to_version AS "toVersion",
  steps, state, execution_id AS "executionId", created_at AS "createdAt", updated_at AS "updatedAt"`;

export async function readFoundation(db: SqlExecutor, projectId: string): Promise<AdoptedFoundation | null> {
  const res = await db.query<AdoptedFoundation>(
    `SELECT project_id AS "projectId", profile_name AS "profileName", foundation_version AS "foundationVersion", adopted_at AS "adoptedAt" FROM ${S}.project_foundations WHERE project_id = $1`,
    [projectId],
  );
  return res.rows[0] ?? null;
}

export async function writeFoundation(db: SqlExecutor, projectId: string, profileName: string, version: string): Promise<AdoptedFoundation> {
  await db.query(
    `INSERT INTO ${S}.project_foundations (project_id, profile_name, foundation_version) VALUES ($1, $2, $3)
     ON CONFLICT (project_id) DO UPDATE SET profile_name = EXCLUDED.profile_name, foundation_version = EXCLUDED.foundation_version, adopted_at = now()`,
    [projectId, profileName, version],
  );
  return (await readFoundation(db, projectId))!;
}

/** The plan that moves the project's pin to `toVersion` of its profile (or of `profileName` when it has none yet); not stored. */
export async function previewUpgrade(db: SqlExecutor, projectId: string, profileName: string | undefined, toVersion: string): Promise<Omit<UpgradePlan, 'planId' | 'state' | 'executionId' | 'createdAt' | 'updatedAt'>> {
  const current = await readFoundation(db, projectId);
  const profile = current?.profileName ?? profileName;
  if (profile === undefined) throw conflict('Upgrade.NoFoundation', 'the project has adopted no foundation; give profileName or adopt one first', 'profileName');
  if (current !== null && profileName !== undefined && profileName !== current.profileName) {
    throw conflict('Upgrade.ProfileMismatch', `the project is on profile '${current.profileName}'; adopt the other profile instead`, 'profileName');
  }
  const target = findFoundation(profile, toVersion);
  if (target === undefined) throw notFound('Foundation.NotFound', `no foundation ${profile}@${toVersion}`);
  if (current?.foundationVersion === toVersion) throw conflict('Upgrade.AlreadyAtVersion', `the project is already on ${profile}@${toVersion}`, 'targetVersion');
  const from = current === null ? undefined : findFoundation(profile, current.foundationVersion);
  return { projectId, profileName: profile, fromVersion: current?.foundationVersion ?? null, toVersion, steps: upgradeSteps(from, target) };
}

export async function createPlan(db: SqlClient, projectId: string, profileName: string | undefined, toVersion: string): Promise<UpgradePlan> {
  const p = await previewUpgrade(db, projectId, profileName, toVersion);
  const res = await db.query<UpgradePlan>(
    `INSERT INTO ${S}.upgrade_plans (id, project_id, profile_name, from_version, to_version, steps, state) VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'planned') RETURNING ${PLAN_COLUMNS}`,
    [randomUUID(), projectId, p.profileName, p.fromVersion, p.toVersion, JSON.stringify(p.steps)],
  );
  return res.rows[0]!;
}

export async function readPlan(db: SqlExecutor, projectId: string, planId: string): Promise<UpgradePlan | null> {
  if (!UUID_TEXT.test(planId)) return null;
  const res = await db.query<UpgradePlan>(`SELECT ${PLAN_COLUMNS} FROM ${S}.upgrade_plans WHERE project_id = $1 AND id = $2::uuid`, [projectId, planId.toLowerCase()]);
  return res.rows[0] ?? null;
}

const setPlan = async (db: SqlExecutor, planId: string, state: PlanState, executionId?: string): Promise<UpgradePlan> =>
  (await db.query<UpgradePlan>(`UPDATE ${S}.upgrade_plans SET state = $2, execution_id = COALESCE($3::uuid, execution_id), updated_at = now() WHERE id = $1 RETURNING ${PLAN_COLUMNS}`, [planId, state, executionId ?? null])).rows[0]!;

export async function approvePlan(db: SqlClient, projectId: string, planId: string): Promise<UpgradePlan> {
  const plan = await readPlan(db, projectId, planId);
  if (plan === null) throw notFound('Upgrade.PlanNotFound', 'upgrade plan not found');
  if (plan.state !== 'planned') throw conflict('Upgrade.NotPlanned', `the plan is ${plan.state}; only a planned plan is approved`);
  return setPlan(db, plan.planId, 'approved');
}

/** Moves the project's pin, if it is still where the plan found it (a stale plan is refused, nothing changes). */
export async function executePlan(db: SqlClient, projectId: string, planId: string): Promise<UpgradePlan> {
  return db.transaction(async (tx) => {
    const plan = await readPlan(tx, projectId, planId);
    if (plan === null) throw notFound('Upgrade.PlanNotFound', 'upgrade plan not found');
    if (plan.state !== 'approved') throw conflict('Upgrade.NotApproved', `the plan is ${plan.state}; approve it before executing`);
    const current = await readFoundation(tx, projectId);
    if ((current?.foundationVersion ?? null) !== plan.fromVersion) throw conflict('Upgrade.StalePlan', 'the project\'s foundation changed since the plan was made; plan again');
    await writeFoundation(tx, projectId, plan.profileName, plan.toVersion);
    return setPlan(tx, plan.planId, 'executed', randomUUID());
  });
}

export async function rollbackExecution(db: SqlClient, projectId: string, executionId: string): Promise<UpgradePlan> {
  return db.transaction(async (tx) => {
    const res = UUID_TEXT.test(executionId)
      ? await tx.query<UpgradePlan>(`SELECT ${PLAN_COLUMNS} FROM ${S}.upgrade_plans WHERE project_id = $1 AND execution_id = $2::uuid`, [projectId, executionId.toLowerCase()])
      : { rows: [] as UpgradePlan[] };
    const plan = res.rows[0];
    if (plan === undefined) throw notFound('Upgrade.ExecutionNotFound', 'upgrade execution not found');
    if (plan.state !== 'executed') throw conflict('Upgrade.NotExecuted', `the execution is ${plan.state}`);
    const current = await readFoundation(tx, projectId);
    if (current?.foundationVersion !== plan.toVersion) throw conflict('Upgrade.StalePlan', 'the project\'s foundation changed since this execution; it cannot be rolled back');
    if (plan.fromVersion === null) await tx.query(`DELETE FROM ${S}.project_foundations WHERE project_id = $1`, [projectId]);
    else await writeFoundation(tx, projectId, plan.profileName, plan.fromVersion);
    return setPlan(tx, plan.planId, 'rolledBack');
  });
}
