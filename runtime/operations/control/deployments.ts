import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../../storage/index.js';
import { conflict, notFound, validationFailed } from '../../errors/service-error.js';
import { readHead } from '../../control/schema-change.js';
import { modelDiff } from '../../proposals/proposal-diff.js';
import type { ProjectModel } from '../../publication/model.js';
import { driveDeployment } from '../../deployments/deployment-driver.js';
import { ACTIVE_STATES, deploymentRecord, insertDeployment, publicationOf, requireDeployment, writePin, type DeploymentRow, type NewDeployment, type PublicationRef } from '../../deployments/deployment-store.js';
import { PRODUCTION, pinInEffect, servableProblem } from '../../deployments/serving.js';
import { driverLease, type DriverLease } from '../../deployments/deployment-lease.js';
import { recoverOrphanedDeployments, type RecoveryDeps, type RecoveryScope } from '../../deployments/deployment-recovery.js';
import type { Services } from '../../services.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { BRANCH_NAME } from './branches.js';
import { DEPLOYMENT_SCHEMAS as DS } from './proposal-schemas.js';

const S = PLATFORM_SCHEMA;

export const DEPLOYMENTS_TAG: TagDecl = { name: 'Deployments', description: 'Which publication an environment serves; ramps, bakes and rollbacks.' };

type DeploymentContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'>;

/** Project-scoped, platform admin only (CONTRACT "Common"); never metered. */
const deploymentOp = (id: string, contract: DeploymentContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: DEPLOYMENTS_TAG, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/** Reason codes of the deployment bodies' 422s, as the hand-written checks answered them (`target` is checked by `targetOf`). */
const DEPLOYMENT_REASONS = {
  prefix: 'Deployment',
  fields: { environment: 'Deployment.UnknownEnvironment', ramp: 'Deployment.InvalidRamp', bake: 'Deployment.InvalidBake', toVersion: 'Deployment.InvalidVersion' },
};
const BY_ID = { id: { description: 'Deployment id.' } };

type Resolved = PublicationRef;

/** Services built by hand (unit tests) carry no lease: one per Services object, from its nodeId. */
const fallbackLeases = new WeakMap<Services, DriverLease>();
function leaseOf(services: Services): DriverLease {
  if (services.deploymentLease !== undefined) return services.deploymentLease;
  let lease = fallbackLeases.get(services);
  if (lease === undefined) fallbackLeases.set(services, (lease = driverLease(services.nodeId)));
  return lease;
}

/**
 * A route that meets an in-flight deployment whose driver is gone reverts it first
 * (docs/proposals-and-deployments.md "Recovery"); true when it did.
 */
async function recoverIn(ctx: OperationContext, scope: RecoveryScope): Promise<boolean> {
  const publications = ctx.services.publications;
  const deps: RecoveryDeps = { db: ctx.services.db, lease: leaseOf(ctx.services), log: ctx.services.log, invalidate: (projectId) => publications.invalidate(projectId) };
  return (await recoverOrphanedDeployments(deps, scope)).length > 0;
}

const positiveVersion = (v: unknown, field: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > Number.MAX_SAFE_INTEGER) throw validationFailed('Deployment.InvalidVersion', `'${field}' must be a positive integer`, field);
  return v;
};

/**
 * The body's `target`, checked here rather than by the schema (proposal-schemas.ts `targetInput`
 * says why): not an object → `Deployment.InvalidBody`, an unknown key → `Deployment.UnknownProperty`
 * naming the key, a bad branch → `Branch.InvalidName`, a bad version → `Deployment.InvalidVersion`.
 */
function targetOf(raw: unknown): { branch: string; publicationVersion: number | null } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw validationFailed('Deployment.InvalidBody', 'body must be a JSON object');
  const t = raw as Record<string, unknown>;
  for (const k of Object.keys(t)) if (k !== 'branch' && k !== 'publicationVersion') throw validationFailed('Deployment.UnknownProperty', `unknown property '${k}'`, k);
  if (typeof t.branch !== 'string' || !BRANCH_NAME.test(t.branch)) throw validationFailed('Branch.InvalidName', "'target.branch' must match ^[a-z0-9][a-z0-9-]{0,62}$", 'target.branch');
  const v = t.publicationVersion;
  return { branch: t.branch, publicationVersion: v === undefined || v === null ? null : positiveVersion(v, 'target.publicationVersion') };
}

/** `target: { branch, publicationVersion? }`: the branch's head, or a publication recorded on that branch (CONTRACT "Deployments"). */
async function resolveTarget(ctx: OperationContext, raw: unknown): Promise<{ branch: string; resolved: Resolved }> {
  const t = targetOf(raw);
  const branch = t.branch;
  const projectId = ctx.scope!.project.id;
  const head = await readHead(ctx.services.db, projectId, branch, false);
  const version = t.publicationVersion ?? head.version;
  const pub = version === 0 ? null : await publicationOf(ctx.services.db, projectId, version, branch);
  if (pub === null || (pub.branch !== branch && version !== head.version)) throw notFound('Deployment.VersionNotFound', `branch '${branch}' has no publication ${version}`);
  return { branch, resolved: pub };
}

/** The schema allows `production` or nothing: the one environment. */
const environmentOf = (v: string | null | undefined): string => v ?? PRODUCTION;

interface DeploymentBody {
  target?: unknown;
  environment?: string | null;
  ramp?: unknown;
  bake?: number | null;
}

/** What production serves now (for requests without `X-Service-Branch`) and main's head. */
async function servingNow(db: SqlExecutor, projectId: string, environment: string): Promise<{ serving: Resolved; head: { version: number; model: ProjectModel } }> {
  const head = await readHead(db, projectId, 'main', false);
  const env = await pinInEffect(db, projectId, environment, head.version);
  const headTarget: Resolved = { branch: 'main', version: head.version, model: head.model };
  if (env === null) return { serving: headTarget, head };
  const pinned = await publicationOf(db, projectId, Number(env.pinned_version));
  return { serving: pinned ?? headTarget, head };
}

function refuseUnservable(target: Resolved, headModel: ProjectModel): void {
  const problem = servableProblem(target.model, headModel);
  if (problem !== null) throw conflict('Deployment.SchemaIncompatible', `publication ${target.version} cannot serve main's tables: ${problem}; change the schema (merge, migrate or rollback in the journal) first`);
}

/** The steps of a ramp (its outer shape checked by the schema): 1 to 20 ascending percentages, as a list or `{ steps }`. */
function parseRamp(v: unknown): number[] | null {
  if (v === undefined || v === null) return null;
  const steps = Array.isArray(v) ? v : (typeof v === 'object' && Array.isArray((v as Record<string, unknown>).steps) ? (v as Record<string, unknown>).steps as unknown[] : null);
  if (steps === null || steps.length === 0 || steps.length > 20) throw validationFailed('Deployment.InvalidRamp', "'ramp' must be a list of 1 to 20 ascending percentages (1..100)", 'ramp');
  let last = 0;
  for (const s of steps) {
    if (typeof s !== 'number' || !Number.isInteger(s) || s <= last || s > 100) throw validationFailed('Deployment.InvalidRamp', "'ramp' must be a list of 1 to 20 ascending percentages (1..100)", 'ramp');
    last = s;
  }
  return steps as number[];
}

const preview = deploymentOp('ControlPlane.Deployment.Preview', {
  summary: 'Plan a deployment without changing anything', routes: [{ method: 'POST', path: 'deployments/preview' }],
  body: DS.ControlDeploymentPreviewInput, reasons: DEPLOYMENT_REASONS,
  output: { status: 200, body: DS.ControlDeploymentPlan },
}, async (ctx) => {
  const b = ctx.inv.body as DeploymentBody;
  const environment = environmentOf(b.environment);
  const { resolved } = await resolveTarget(ctx, b.target);
  const { serving } = await servingNow(ctx.services.db, ctx.scope!.project.id, environment);
  const migrations = modelDiff(serving.model, resolved.model);
  const steps = [
    { action: 'validate', detail: 'the target must be servable on main\'s tables' },
    { action: 'switch', fromVersion: serving.version, toVersion: resolved.version },
  ];
  return control(ctx, 'Deployment', 'previewed', { plan: { fromVersion: serving.version, toVersion: resolved.version, migrations, steps } });
});

/**
 * Inserts a deployment. On 409 the one in flight may have lost its driver: it is reverted and
 * the insert tried once more, from what production serves after the revert.
 */
async function insertOrTakeOver(ctx: OperationContext, d: NewDeployment, target: Resolved, from: Resolved): Promise<{ row: DeploymentRow; from: Resolved }> {
  const db = ctx.services.db;
  try {
    return { row: await insertDeployment(db, d), from };
  } catch (err) {
    if ((err as { reasonCode?: string }).reasonCode !== 'Deployment.InProgress' || !(await recoverIn(ctx, { projectId: d.projectId, environment: d.environment }))) throw err;
    const now = await servingNow(db, d.projectId, d.environment);
    refuseUnservable(target, now.head.model);
    return { row: await insertDeployment(db, { ...d, fromVersion: now.serving.version }), from: now.serving };
  }
}

const create = deploymentOp('ControlPlane.Deployment.Create', {
  summary: 'Deploy a branch head or publication to an environment (optionally ramped, then baked)', routes: [{ method: 'POST', path: 'deployments' }],
  body: DS.ControlDeploymentInput, reasons: DEPLOYMENT_REASONS,
  output: { status: 202, body: DS.ControlDeploymentAccepted },
}, async (ctx) => {
  const b = ctx.inv.body as DeploymentBody;
  const environment = environmentOf(b.environment);
  const ramp = parseRamp(b.ramp);
  const bake = b.bake ?? 0;
  const { branch, resolved } = await resolveTarget(ctx, b.target);
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const now = await servingNow(db, projectId, environment);
  refuseUnservable(resolved, now.head.model);
  const id = randomUUID();
  const lease = leaseOf(ctx.services);
  const { row, from: serving } = await insertOrTakeOver(ctx, { id, projectId, environment, targetBranch: branch, targetVersion: resolved.version, fromVersion: now.serving.version, ramp, bake, lease }, resolved, now.serving);
  const publications = ctx.services.publications;
  void driveDeployment(db, { id, projectId, environment, from: serving, target: resolved, ramp, bake, lease, invalidate: () => publications.invalidate(projectId) });
  const rec = deploymentRecord(row);
  return control(ctx, 'Deployment', 'accepted', { id: rec.id, state: rec.state, environment: rec.environment, target: rec.target }, 202);
});

const read = deploymentOp('ControlPlane.Deployment.Read', {
  summary: 'Read a deployment and the version its environment serves', routes: [{ method: 'GET', path: 'deployments/:id' }], params: BY_ID,
  output: { status: 200, body: DS.ControlDeploymentSingle },
}, async (ctx) => {
  const projectId = ctx.scope!.project.id;
  let row = await requireDeployment(ctx.services.db, projectId, ctx.inv.params.id ?? '');
  if (ACTIVE_STATES.includes(row.state) && (await recoverIn(ctx, { projectId, id: row.id }))) row = await requireDeployment(ctx.services.db, projectId, row.id);
  return control(ctx, 'Deployment', 'read', deploymentRecord(row));
});

/** Ends the deployment `rolledBack` and pins the environment to `toVersion` in one transaction. */
const rollback = deploymentOp('ControlPlane.Deployment.Rollback', {
  summary: 'Roll a deployment back: the environment serves `toVersion`', routes: [{ method: 'POST', path: 'deployments/:id/rollback' }], params: BY_ID,
  body: DS.ControlDeploymentRollbackInput, reasons: DEPLOYMENT_REASONS,
  output: { status: 202, body: DS.ControlDeploymentSingle },
}, async (ctx) => {
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const row = await requireDeployment(db, projectId, ctx.inv.params.id ?? '');
  const { toVersion } = ctx.inv.body as { toVersion: number };
  const to = await publicationOf(db, projectId, toVersion);
  if (to === null) throw notFound('Deployment.VersionNotFound', `publication ${toVersion} never existed`);
  const rolled = await db.transaction(async (tx) => {
    const head = await readHead(tx, projectId, 'main', false);
    refuseUnservable(to, head.model);
    const res = await tx.query(
      `UPDATE ${S}.deployments SET state = 'rolledBack', serving_version = $2, updated_at = now() WHERE id = $1 AND state <> 'rolledBack'`,
      [row.id, toVersion],
    );
    if ((res.rowCount ?? 0) === 0) return false;
    await writePin(tx, projectId, row.environment, { branch: to.branch, version: to.version, head: head.version, ramp: null });
    return true;
  });
  if (!rolled) throw conflict('Deployment.AlreadyRolledBack', 'the deployment is already rolled back');
  ctx.services.publications.invalidate(projectId);
  const after = await requireDeployment(db, projectId, row.id);
  return control(ctx, 'Deployment', 'rolledBack', deploymentRecord(after), 202);
});


/** `/api/deployments…` (CONTRACT "Deployments"). */
export const DEPLOYMENT_SPECS = { preview, create, read, rollback };
