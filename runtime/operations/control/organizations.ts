import { notFound, validationFailed } from '../../errors/service-error.js';
import { UUID_TEXT, type OrganizationRow } from '../../control/rows.js';
import { listOrganizations, projectsOfOrganization, readOrganization } from '../../control/organization-store.js';
import { readTenant } from '../../control/tenant-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { readBody } from './body.js';
import { checkSlug } from './tenants.js';

const admin = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'none', grants: noGrants, execute });

/** A path id that is not a UUID names nothing the platform could have made: 422, not 404. */
export function checkId(value: string | undefined, block: string, field = 'id'): string {
  if (value === undefined || !UUID_TEXT.test(value)) throw validationFailed(`${block}.InvalidId`, `'${field}' must be a UUID`, field);
  return value.toLowerCase();
}

export const checkName = (name: string, block: string): string => {
  if (name.trim() === '') throw validationFailed(`${block}.InvalidName`, 'name must not be empty', 'name');
  return name;
};

async function requireOrganization(ctx: OperationContext, param = 'id'): Promise<OrganizationRow> {
  const org = await readOrganization(ctx.services.db, checkId(ctx.inv.params[param], 'Organization', param));
  if (org === null) throw notFound('Organization.NotFound', 'organization not found');
  return org;
}

/** `/api/OrganizationRecord` (CONTRACT: Records): a tenant's named groups of projects. */
export const ORGANIZATION_SPECS = {
  list: admin('ControlPlane.OrganizationRecord.List', async (ctx) => {
    const tenantRef = ctx.inv.query.get('tenant') ?? null;
    let tenantId: string | null = null;
    if (tenantRef !== null) {
      const tenant = await readTenant(ctx.services.db, tenantRef);
      if (tenant === null) throw notFound('Tenant.NotFound', 'tenant not found');
      tenantId = tenant.id;
    }
    return control(ctx, 'OrganizationRecord', 'listed', await listOrganizations(ctx.services.db, tenantId));
  }),
  read: admin('ControlPlane.OrganizationRecord.Read', async (ctx) => control(ctx, 'OrganizationRecord', 'read', await requireOrganization(ctx))),
  create: admin('ControlPlane.OrganizationRecord.Create', async (ctx) => {
    const b = readBody<{ slug: string; name: string; tenant: string }>(ctx.inv.body, { slug: 'string', name: 'string', tenant: 'string' }, 'Organization');
    const slug = checkSlug(b.slug, 'Organization');
    const name = checkName(b.name, 'Organization');
    const tenant = await readTenant(ctx.services.db, b.tenant);
    if (tenant === null) throw notFound('Tenant.NotFound', 'tenant not found');
    const row = await ctx.services.control.createOrganization({ tenantId: tenant.id, slug, name });
    return control(ctx, 'OrganizationRecord', 'created', row, 201);
  }),
  update: admin('ControlPlane.OrganizationRecord.Update', async (ctx) => {
    const org = await requireOrganization(ctx);
    const b = readBody<{ name?: string }>(ctx.inv.body, { name: 'string?' }, 'Organization');
    if (b.name !== undefined) checkName(b.name, 'Organization');
    const row = await ctx.services.control.updateOrganization(org.tenantId, org.id, { name: b.name });
    return control(ctx, 'OrganizationRecord', 'updated', row);
  }),
  delete: admin('ControlPlane.OrganizationRecord.Delete', async (ctx) => {
    const org = await requireOrganization(ctx);
    await ctx.services.control.deleteOrganization(org.tenantId, org.id);
    return { status: 204, body: undefined };
  }),
  /** `GET /api/ProjectRecord/ByOrganization/{organizationId}`: exactly the projects naming it. */
  projects: admin('ControlPlane.ProjectRecord.ByOrganization', async (ctx) => {
    const org = await requireOrganization(ctx, 'organizationId');
    return control(ctx, 'ProjectRecord', 'listed', await projectsOfOrganization(ctx.services.db, org.id));
  }),
};
