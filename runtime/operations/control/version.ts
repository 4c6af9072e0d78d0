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
import type { OperationContext } from '../types.js';
import type { ParamDecl, TagDecl } from '../contract/index.js';
import { checkId } from './organizations.js';
import { familyOp } from './records-family-op.js';
import { PROFILE_PATTERN, SEMVER_PATTERN, VERSION_SCHEMAS as VS } from './version-schemas.js';

const S = PLATFORM_SCHEMA;

export const VERSIONING_TAG: TagDecl = { name: 'Versioning', description: 'Platform and project versions, publications, foundations, binding stability.' };
export const versionOp = familyOp(VERSIONING_TAG);

/**
 * Path parameters of the `/version…` routes. Their patterns are documented,
 * not validated by the router: the handlers answer 422 with their own reasons.
 */
export const VERSION_PARAMS: Record<string, ParamDecl> = {
  projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } },
  publicationVersion: { description: 'A publication version (positive integer).', schema: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' } },
  profileName: { description: 'Foundation profile.', schema: { type: 'string', pattern: PROFILE_PATTERN } },
  foundationVersion: { description: 'Foundation version (`1.2.0`).', schema: { type: 'string', pattern: SEMVER_PATTERN } },
  planId: { description: 'Upgrade plan id.', schema: { type: 'string', format: 'uuid' } },
  executionId: { description: 'Upgrade execution id.', schema: { type: 'string', format: 'uuid' } },
};

/** By path project id, no scope headers. */
const byPath = { scope: 'none' } as const;
const P = 'version/projects/:projectId';

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
  platform: versionOp('ControlPlane.Version.Platform', { authn: 'public', scope: 'none' }, {
    summary: 'Platform version and API versions (no credential)', routes: [{ method: 'GET', path: 'version' }],
    output: { status: 200, body: VS.ControlPlatformVersion }, errors: [],
  }, async (ctx) => control(ctx, 'Version', 'read', { platformVersion: PLATFORM_VERSION, apiVersions: [...API_VERSIONS] })),
  project: versionOp('ControlPlane.Version.Project', byPath, {
    summary: 'Head publicationVersion of every branch and the version production serves', routes: [{ method: 'GET', path: P }], params: VERSION_PARAMS,
    output: { status: 200, body: VS.ControlProjectVersions },
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    const v = await versionVector(ctx, p.id);
    return control(ctx, 'Version', 'read', { projectId: p.id, branches: v.branches, environments: { production: v.production } });
  }),
  publication: versionOp('ControlPlane.Version.Publication', byPath, {
    summary: 'One publication: branch, entities, descriptor hash', routes: [{ method: 'GET', path: `${P}/publication/:publicationVersion` }], params: VERSION_PARAMS,
    output: { status: 200, body: VS.ControlPublication },
  }, async (ctx) => {
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
  baseline: versionOp('ControlPlane.Version.PlatformBaseline', byPath, {
    summary: 'Platform baseline: versions, protocols, foundations', routes: [{ method: 'GET', path: 'version/platform-baseline' }],
    output: { status: 200, body: VS.ControlPlatformBaseline }, errors: [401, 403],
  }, async (ctx) => control(ctx, 'PlatformBaseline', 'read', {
    platformVersion: PLATFORM_VERSION, apiVersions: [...API_VERSIONS], platformSchemaVersion: PLATFORM_SCHEMA_VERSION,
    protocols: [...PROTOCOLS], foundations: FOUNDATIONS.map((f) => ({ profileName: f.profileName, foundationVersion: f.foundationVersion })),
  })),
  foundation: versionOp('ControlPlane.Version.Foundation', byPath, {
    summary: 'A foundation profile at a version', routes: [{ method: 'GET', path: 'version/foundations/:profileName/:foundationVersion' }], params: VERSION_PARAMS,
    output: { status: 200, body: VS.ControlFoundation },
  }, async (ctx) => {
    const name = checkProfileName(ctx.inv.params.profileName);
    const version = checkFoundationVersion(ctx.inv.params.foundationVersion);
    const f = findFoundation(name, version);
    if (f === undefined) throw notFound('Foundation.NotFound', `no foundation ${name}@${version}`);
    return control(ctx, 'Foundation', 'read', { ...f, capabilities: [...f.capabilities], available: f.minPlatformSchema <= PLATFORM_SCHEMA_VERSION });
  }),
  projectFoundation: versionOp('ControlPlane.Version.ProjectFoundation', byPath, {
    summary: 'The foundation the project adopted', routes: [{ method: 'GET', path: `${P}/foundation` }], params: VERSION_PARAMS,
    output: { status: 200, body: VS.ControlProjectFoundation },
  }, async (ctx) => {
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
