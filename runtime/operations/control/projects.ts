import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { PROJECT_COLUMNS, type ProjectRow } from '../../control/rows.js';
import { projectRelatives, readProject } from '../../control/project-store.js';
import { readTenant } from '../../control/tenant-store.js';
import { control, noContent } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import type { TagDecl } from '../contract/index.js';
import { reauthorizeRealtime } from './reauthorize-realtime.js';
import { checkSlug, platformAdminOp } from './tenants.js';
import { PROJECT_SCHEMAS as S } from './project-schemas.js';

export const PROJECTS_TAG: TagDecl = { name: 'Projects', description: 'Projects of the platform and their hierarchy (`/projects…`, `/ProjectRecord`), platform admin only.' };

/** Reason codes of the project bodies' 422s (`Project.UnknownProperty`, `Project.MissingProperty`, …). */
const REASONS = { prefix: 'Project' };
const PROJECT_ID = { projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } };
const RECORD_ID = { id: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } };
const TENANT_QUERY = { description: 'Tenant slug or id (else the `X-Service-Tenant` header).' };
/** A delete can meet a conflict (child projects); no body. */
const DELETE_ERRORS = [400, 401, 403, 404, 409, 422];

async function requireProject(ctx: OperationContext, param = 'projectId'): Promise<ProjectRow> {
  const id = ctx.inv.params[param] ?? '';
  const p = await readProject(ctx.services.db, null, id);
  if (p === null) throw notFound('Project.NotFound', 'project not found');
  return p;
}

async function create(ctx: OperationContext, tenantRef: string, slug: string, name: string, parentProjectId: string | null, organizationId: string | null = null) {
  const tenant = await readTenant(ctx.services.db, tenantRef);
  if (tenant === null) throw notFound('Tenant.NotFound', 'tenant not found');
  const row = await ctx.services.control.createProject({ tenantId: tenant.id, slug: checkSlug(slug, 'Project'), name, parentProjectId: parentProjectId?.toLowerCase() ?? null, organizationId: organizationId?.toLowerCase() ?? null });
  return control(ctx, 'Project', 'created', row, 201);
}

const STATES = ['active', 'suspended', 'archived'];

/** Whether any key or string inside a JSON value holds U+0000. */
const hasNul = (v: unknown): boolean =>
  typeof v === 'string' ? v.includes('\u0000') : typeof v === 'object' && v !== null && Object.entries(v).some(([k, x]) => k.includes('\u0000') || hasNul(x));

function stateAction(id: string, tail: string, state: string, summary: string): DeclaredSpec {
  return platformAdminOp(id, {
    tag: PROJECTS_TAG, summary, routes: [{ method: 'POST', path: `projects/:projectId/${tail}` }], params: PROJECT_ID,
    output: { status: 200, body: S.ControlProjectStateChanged },
  }, async (ctx) => {
    const p = await requireProject(ctx);
    const row = await ctx.services.control.updateProject(p.id, { state });
    if (state !== 'active') await reauthorizeRealtime(ctx, p.id, false);
    return control(ctx, 'Project', state, row);
  });
}

const relatives = (id: string, dir: 'children' | 'descendants' | 'ancestors', summary: string): DeclaredSpec =>
  platformAdminOp(id, {
    tag: PROJECTS_TAG, summary, routes: [{ method: 'GET', path: `projects/:projectId/${dir}` }], params: PROJECT_ID,
    output: { status: 200, body: S.ControlProjectRelatives },
  }, async (ctx) => {
    const p = await requireProject(ctx);
    return control(ctx, 'Project', 'listed', await projectRelatives(ctx.services.db, p.id, dir));
  });

type NewProject = { tenant: string; slug: string; name: string; parentProjectId?: string | null; organizationId?: string | null };
const CREATE = 'Create a project in a tenant, optionally under a parent project and in an organization';

const createProject = (id: string, path: string, summary: string): DeclaredSpec => platformAdminOp(id, {
  tag: PROJECTS_TAG, summary, routes: [{ method: 'POST', path }],
  body: S.ControlProjectInput, reasons: REASONS, output: { status: 201, body: S.ControlProjectCreated },
}, async (ctx) => {
  const b = ctx.inv.body as NewProject;
  return create(ctx, b.tenant, b.slug, b.name, b.parentProjectId ?? null, b.organizationId ?? null);
});

export const PROJECT_SPECS = {
  create: createProject('ControlPlane.Projects.Create', 'projects/create', CREATE),
  createChild: platformAdminOp('ControlPlane.Projects.CreateChild', {
    tag: PROJECTS_TAG, summary: 'Create a child project (in the parent\'s tenant)', routes: [{ method: 'POST', path: 'projects/:parentProjectId/children' }],
    params: { parentProjectId: { description: 'The parent project\'s id.', schema: { type: 'string', format: 'uuid' } } },
    body: S.ControlProjectChildInput, reasons: REASONS, output: { status: 201, body: S.ControlProjectCreated },
  }, async (ctx) => {
    const parent = await requireProject(ctx, 'parentProjectId');
    const b = ctx.inv.body as { slug: string; name: string };
    return create(ctx, parent.tenantId, b.slug, b.name, parent.id);
  }),
  resolve: platformAdminOp('ControlPlane.Projects.Resolve', {
    tag: PROJECTS_TAG, summary: 'Resolve a tenant and project (slugs or ids) to the project record',
    description: 'Give `tenant` and `project` as query parameters or as the `X-Service-Tenant` and `X-Service-Project` headers; without them 422 `Project.ResolveNeedsScope`.',
    routes: [{ method: 'GET', path: 'projects/resolve' }],
    query: { tenant: TENANT_QUERY, project: { description: 'Project slug or id (else the `X-Service-Project` header).' } },
    output: { status: 200, body: S.ControlProjectResolved },
  }, async (ctx) => {
    const tenantRef = ctx.inv.query.get('tenant') ?? ctx.inv.tenantHeader;
    const projectRef = ctx.inv.query.get('project') ?? ctx.inv.projectHeader;
    if (tenantRef == null || projectRef == null) throw validationFailed('Project.ResolveNeedsScope', 'give tenant and project (query or X-Service-* headers)', 'project');
    const tenant = await readTenant(ctx.services.db, tenantRef);
    const project = tenant === null ? null : await readProject(ctx.services.db, tenant.id, projectRef);
    if (tenant === null || project === null) throw notFound('Project.NotFound', 'project not found');
    return control(ctx, 'Project', 'resolved', { ...project, tenantSlug: tenant.slug });
  }),
  children: relatives('ControlPlane.Projects.Children', 'children', 'The project\'s child projects'),
  descendants: relatives('ControlPlane.Projects.Descendants', 'descendants', 'Every project below the project, nearest first'),
  ancestors: relatives('ControlPlane.Projects.Ancestors', 'ancestors', 'The project\'s parent, its parent, and so on to the root'),
  suspend: stateAction('ControlPlane.Projects.Suspend', 'suspend', 'suspended', 'Suspend a project: its open subscriptions are authorized again'),
  resume: stateAction('ControlPlane.Projects.Resume', 'resume', 'active', 'Resume a suspended or archived project (state `active`)'),
  archive: stateAction('ControlPlane.Projects.Archive', 'archive', 'archived', 'Archive a project: its open subscriptions are authorized again'),
  recordList: platformAdminOp('ControlPlane.ProjectRecord.List', {
    tag: PROJECTS_TAG, summary: 'List projects (oldest first, at most 1,000), of every tenant or of one',
    routes: [{ method: 'GET', path: 'ProjectRecord' }], query: { tenant: TENANT_QUERY },
    output: { status: 200, body: S.ControlProjectRecordEntries },
  }, async (ctx) => {
    const tenantRef = ctx.inv.query.get('tenant') ?? ctx.inv.tenantHeader;
    let sql = `SELECT ${PROJECT_COLUMNS} FROM ${PLATFORM_SCHEMA}.projects`;
    const params: unknown[] = [];
    if (tenantRef != null) {
      const tenant = await readTenant(ctx.services.db, tenantRef);
      if (tenant === null) throw notFound('Tenant.NotFound', 'tenant not found');
      sql += ' WHERE tenant_id = $1';
      params.push(tenant.id);
    }
    const res = await ctx.services.db.query<ProjectRow>(`${sql} ORDER BY created_at, id LIMIT 1000`, params);
    return control(ctx, 'ProjectRecord', 'listed', res.rows);
  }),
  recordRead: platformAdminOp('ControlPlane.ProjectRecord.Read', {
    tag: PROJECTS_TAG, summary: 'Read a project', routes: [{ method: 'GET', path: 'ProjectRecord/:id' }], params: RECORD_ID,
    output: { status: 200, body: S.ControlProjectRecordEntry },
  }, async (ctx) => control(ctx, 'ProjectRecord', 'read', await requireProject(ctx, 'id'))),
  recordCreate: createProject('ControlPlane.ProjectRecord.Create', 'ProjectRecord', `${CREATE} (same as \`POST /projects/create\`)`),
  recordUpdate: platformAdminOp('ControlPlane.ProjectRecord.Update', {
    tag: PROJECTS_TAG, summary: 'Change a project\'s name, state, settings or organization', routes: [{ method: 'PUT', path: 'ProjectRecord/:id' }], params: RECORD_ID,
    body: S.ControlProjectUpdate, reasons: REASONS, output: { status: 200, body: S.ControlProjectRecordEntry },
  }, async (ctx) => {
    const p = await requireProject(ctx, 'id');
    const b = { ...(ctx.inv.body as { name?: string | null; state?: string | null; settings?: Record<string, unknown> | null; organizationId?: string | null }) };
    // An explicit null moves the project out of its organization; absent keeps it.
    if (typeof b.organizationId === 'string') b.organizationId = b.organizationId.toLowerCase();
    // Null settings keep them, as a null optional property always meant absent (it used to store a JSON null, which is no settings object).
    if (b.settings === null) delete b.settings;
    if (b.state !== undefined && !STATES.includes(b.state as string)) throw validationFailed('Project.InvalidState', `state must be one of ${STATES.join(', ')}`, 'state');
    if (b.settings !== undefined && JSON.stringify(b.settings).length > 64 * 1024) throw validationFailed('Project.SettingsTooLarge', 'settings must be under 64 KiB', 'settings');
    if (b.settings !== undefined && hasNul(b.settings)) throw validationFailed('Project.InvalidProperty', 'settings must not contain NUL characters (jsonb refuses them)', 'settings');
    const row = await ctx.services.control.updateProject(p.id, b as { name?: string; state?: string; settings?: Record<string, unknown>; organizationId?: string | null });
    if (b.state !== undefined && b.state !== 'active') await reauthorizeRealtime(ctx, p.id, false);
    return control(ctx, 'ProjectRecord', 'updated', row);
  }),
  recordDelete: platformAdminOp('ControlPlane.ProjectRecord.Delete', {
    tag: PROJECTS_TAG, summary: 'Delete a project with no child projects (its branches, rows and events go with it)', routes: [{ method: 'DELETE', path: 'ProjectRecord/:id' }], params: RECORD_ID,
    output: { status: 204 }, errors: DELETE_ERRORS,
  }, async (ctx) => {
    await ctx.services.control.deleteProject((await requireProject(ctx, 'id')).id);
    return noContent;
  }),
};
