import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { PROJECT_COLUMNS, type ProjectRow } from '../../control/rows.js';
import { projectRelatives, readProject } from '../../control/project-store.js';
import { readTenant } from '../../control/tenant-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { readBody } from './body.js';
import { reauthorizeRealtime } from './reauthorize-realtime.js';
import { checkSlug } from './tenants.js';

const admin = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'none', grants: noGrants, execute });

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

function stateAction(id: string, state: string): OperationSpec {
  return admin(id, async (ctx) => {
    const p = await requireProject(ctx);
    const row = await ctx.services.control.updateProject(p.id, { state });
    if (state !== 'active') await reauthorizeRealtime(ctx, p.id, false);
    return control(ctx, 'Project', state, row);
  });
}

const relatives = (id: string, dir: 'children' | 'descendants' | 'ancestors'): OperationSpec =>
  admin(id, async (ctx) => {
    const p = await requireProject(ctx);
    return control(ctx, 'Project', 'listed', await projectRelatives(ctx.services.db, p.id, dir));
  });

type NewProject = { tenant: string; slug: string; name: string; parentProjectId?: string; organizationId?: string };
const NEW_PROJECT = { tenant: 'string', slug: 'string', name: 'string', parentProjectId: 'uuid?', organizationId: 'uuid?' } as const;

export const PROJECT_SPECS = {
  create: admin('ControlPlane.Projects.Create', async (ctx) => {
    const b = readBody<NewProject>(ctx.inv.body, NEW_PROJECT, 'Project');
    return create(ctx, b.tenant, b.slug, b.name, b.parentProjectId ?? null, b.organizationId ?? null);
  }),
  createChild: admin('ControlPlane.Projects.CreateChild', async (ctx) => {
    const parent = await requireProject(ctx, 'parentProjectId');
    const b = readBody<{ slug: string; name: string }>(ctx.inv.body, { slug: 'string', name: 'string' }, 'Project');
    return create(ctx, parent.tenantId, b.slug, b.name, parent.id);
  }),
  resolve: admin('ControlPlane.Projects.Resolve', async (ctx) => {
    const tenantRef = ctx.inv.query.get('tenant') ?? ctx.inv.tenantHeader;
    const projectRef = ctx.inv.query.get('project') ?? ctx.inv.projectHeader;
    if (tenantRef == null || projectRef == null) throw validationFailed('Project.ResolveNeedsScope', 'give tenant and project (query or X-Service-* headers)', 'project');
    const tenant = await readTenant(ctx.services.db, tenantRef);
    const project = tenant === null ? null : await readProject(ctx.services.db, tenant.id, projectRef);
    if (tenant === null || project === null) throw notFound('Project.NotFound', 'project not found');
    return control(ctx, 'Project', 'resolved', { ...project, tenantSlug: tenant.slug });
  }),
  children: relatives('ControlPlane.Projects.Children', 'children'),
  descendants: relatives('ControlPlane.Projects.Descendants', 'descendants'),
  ancestors: relatives('ControlPlane.Projects.Ancestors', 'ancestors'),
  suspend: stateAction('ControlPlane.Projects.Suspend', 'suspended'),
  resume: stateAction('ControlPlane.Projects.Resume', 'active'),
  archive: stateAction('ControlPlane.Projects.Archive', 'archived'),
  recordList: admin('ControlPlane.ProjectRecord.List', async (ctx) => {
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
  recordRead: admin('ControlPlane.ProjectRecord.Read', async (ctx) => control(ctx, 'ProjectRecord', 'read', await requireProject(ctx, 'id'))),
  recordCreate: admin('ControlPlane.ProjectRecord.Create', async (ctx) => {
    const b = readBody<NewProject>(ctx.inv.body, NEW_PROJECT, 'Project');
    return create(ctx, b.tenant, b.slug, b.name, b.parentProjectId ?? null, b.organizationId ?? null);
  }),
  recordUpdate: admin('ControlPlane.ProjectRecord.Update', async (ctx) => {
    const p = await requireProject(ctx, 'id');
    const b = readBody<{ name?: string; state?: string; settings?: Record<string, unknown>; organizationId?: string | null }>(ctx.inv.body, { name: 'string?', state: 'string?', settings: 'object?', organizationId: 'uuid?' }, 'Project');
    // An explicit null moves the project out of its organization; absent keeps it.
    if (typeof b.organizationId === 'string') b.organizationId = b.organizationId.toLowerCase();
    if (b.state !== undefined && !STATES.includes(b.state)) throw validationFailed('Project.InvalidState', `state must be one of ${STATES.join(', ')}`, 'state');
    if (b.settings !== undefined && JSON.stringify(b.settings).length > 64 * 1024) throw validationFailed('Project.SettingsTooLarge', 'settings must be under 64 KiB', 'settings');
    if (b.settings !== undefined && hasNul(b.settings)) throw validationFailed('Project.InvalidProperty', 'settings must not contain NUL characters (jsonb refuses them)', 'settings');
    const row = await ctx.services.control.updateProject(p.id, b);
    if (b.state !== undefined && b.state !== 'active') await reauthorizeRealtime(ctx, p.id, false);
    return control(ctx, 'ProjectRecord', 'updated', row);
  }),
  recordDelete: admin('ControlPlane.ProjectRecord.Delete', async (ctx) => {
    const p = await requireProject(ctx, 'id');
    await ctx.services.control.deleteProject(p.id);
    return { status: 204, body: undefined };
  }),
};
