import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { PRODUCTION, pinInEffect } from '../../deployments/serving.js';
import { readProject } from '../../control/project-store.js';
import type { ProjectRow } from '../../control/rows.js';
import type { ProjectModel } from '../../publication/model.js';
import { FOUNDATIONS, findFoundation } from '../../versioning/foundations.js';
import { readFoundation } from '../../versioning/foundation-store.js';
import { API_VERSIONS, PLATFORM_SCHEMA_VERSION, PLATFORM_VERSION, PROTOCOLS } from '../../versioning/platform.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { checkId } from './organizations.js';

const S = PLATFORM_SCHEMA;
const admin = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'none', grants: noGrants, execute });

export async function requireProjectParam(ctx: OperationContext): Promise<ProjectRow> {
  const p = await readProject(ctx.services.db, null, checkId(ctx.inv.params.projectId, 'Project', 'projectId'));
  if (p === null) throw notFound('Project.NotFound', 'project not found');
  return p;
}

/**
 * Branch heads of a project, and the version production serves: main's head, or the
 * publication a deployment pins while that pin holds (during a ramp, the one the ramp moves
 * away from: it still serves the requests outside the ramp's percentage).
 */
async function versionVector(ctx: OperationContext, projectId: string): Promise<{ branches: Record<string, number>; production: number }> {
  const res = await ctx.services.db.query<{ name: string; head_version: string }>(`SELECT name, head_version FROM ${S}.branches WHERE project_id = $1 ORDER BY name`, [projectId]);
  const branches: Record<string, number> = {};
  for (const r of res.rows) branches[r.name] = Number(r.head_version);
  const main = branches.main ?? 0;
  const pin = await pinInEffect(ctx.services.db, projectId, PRODUCTION, main);
  return { branches, production: pin === null ? main : Number(pin.pinned_version) };
}

const POSITIVE_INT = /^[1-9][0-9]{0,17}$/;

/** `/api/version` (CONTRACT: Versioning): what this platform runs and what each project publishes. */
export const VERSION_SPECS = {
  platform: {
    id: 'ControlPlane.Version.Platform', authn: 'public', scope: 'none', grants: noGrants,
    execute: async (ctx) => control(ctx, 'Version', 'read', { platformVersion: PLATFORM_VERSION, apiVersions: [...API_VERSIONS] }),
  } satisfies OperationSpec,
  project: admin('ControlPlane.Version.Project', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const v = await versionVector(ctx, p.id);
    return control(ctx, 'Version', 'read', { projectId: p.id, branches: v.branches, environments: { production: v.production } });
  }),
  publication: admin('ControlPlane.Version.Publication', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const raw = ctx.inv.params.publicationVersion ?? '';
    if (!POSITIVE_INT.test(raw)) throw validationFailed('Publication.InvalidVersion', 'publicationVersion must be a positive integer', 'publicationVersion');
    // Branch names are unique per project; main's publication first when several branches reached this number.
    const res = await ctx.services.db.query<{ branch: string; model: ProjectModel; descriptor_hash: string; created_at: string | Date }>(
      `SELECT branch, model, descriptor_hash, created_at FROM ${S}.publications WHERE project_id = $1 AND version = $2 ORDER BY branch <> 'main', branch LIMIT 1`,
      [p.id, raw],
    );
    const row = res.rows[0];
    if (row === undefined) throw notFound('Publication.NotFound', `publication ${raw} not found`);
    return control(ctx, 'Publication', 'read', {
      publicationVersion: Number(raw), branch: row.branch, entities: row.model.entities.map((e) => e.entityName),
      descriptorHash: row.descriptor_hash, createdAt: new Date(row.created_at).toISOString(),
    });
  }),
  baseline: admin('ControlPlane.Version.PlatformBaseline', async (ctx) => control(ctx, 'PlatformBaseline', 'read', {
    platformVersion: PLATFORM_VERSION, apiVersions: [...API_VERSIONS], platformSchemaVersion: PLATFORM_SCHEMA_VERSION,
    protocols: [...PROTOCOLS], foundations: FOUNDATIONS.map((f) => ({ profileName: f.profileName, foundationVersion: f.foundationVersion })),
  })),
  foundation: admin('ControlPlane.Version.Foundation', async (ctx) => {
    const name = checkProfileName(ctx.inv.params.profileName);
    const version = checkFoundationVersion(ctx.inv.params.foundationVersion);
    const f = findFoundation(name, version);
    if (f === undefined) throw notFound('Foundation.NotFound', `no foundation ${name}@${version}`);
    return control(ctx, 'Foundation', 'read', { ...f, capabilities: [...f.capabilities], available: f.minPlatformSchema <= PLATFORM_SCHEMA_VERSION });
  }),
  projectFoundation: admin('ControlPlane.Version.ProjectFoundation', async (ctx) => {
    const p = await requireProjectParam(ctx);
    return control(ctx, 'Foundation', 'read', await readFoundation(ctx.services.db, p.id));
  }),
};

const PROFILE = /^[a-z][a-z0-9-]{0,62}$/;
const SEMVER = /^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$/;

export function checkProfileName(v: unknown, field = 'profileName'): string {
  if (typeof v !== 'string' || !PROFILE.test(v)) throw validationFailed('Foundation.InvalidProfileName', `${field} must be lower-case letters, digits and hyphens`, field);
  return v;
}

export function checkFoundationVersion(v: unknown, field = 'foundationVersion'): string {
  if (typeof v !== 'string' || !SEMVER.test(v)) throw validationFailed('Foundation.InvalidVersion', `${field} must be a version like 1.2.0`, field);
  return v;
}
