import { notFound, validationFailed } from '../../errors/service-error.js';
import { UUID_TEXT, type OrganizationRow } from '../../control/rows.js';
import { listOrganizations, projectsOfOrganization, readOrganization } from '../../control/organization-store.js';
import { readTenant } from '../../control/tenant-store.js';
import { control } from '../envelopes.js';
import type { OperationContext } from '../types.js';
import type { TagDecl } from '../contract/index.js';
import { checkSlug } from './tenants.js';
import { familyOp } from './records-family-op.js';
import { RECORD_SCHEMAS as RS } from './record-schemas.js';

export const RECORDS_TAG: TagDecl = { name: 'Records', description: 'Organizations, project records by organization, templates, the root project.' };
export const recordOp = familyOp(RECORDS_TAG);

/** Platform admin, no scope headers: the records are named by path or body. */
const unscoped = { scope: 'none' } as const;
const BY_ID = { id: { description: 'Organization id.', schema: { type: 'string', format: 'uuid' } } };
const O = 'OrganizationRecord';

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
  list: recordOp('ControlPlane.OrganizationRecord.List', unscoped, {
    summary: 'List organizations', routes: [{ method: 'GET', path: O }],
    query: { tenant: { description: 'Only this tenant\'s organizations (slug or id).' } },
    output: { status: 200, body: RS.ControlOrganizationList },
  }, async (ctx) => {
    const tenantRef = ctx.inv.query.get('tenant') ?? null;
    let tenantId: string | null = null;
    if (tenantRef !== null) {
      const tenant = await readTenant(ctx.services.db, tenantRef);
      if (tenant === null) throw notFound('Tenant.NotFound', 'tenant not found');
      tenantId = tenant.id;
    }
    return control(ctx, 'OrganizationRecord', 'listed', await listOrganizations(ctx.services.db, tenantId));
  }),
  read: recordOp('ControlPlane.OrganizationRecord.Read', unscoped, {
    summary: 'Read an organization', routes: [{ method: 'GET', path: `${O}/:id` }], params: BY_ID,
    output: { status: 200, body: RS.ControlOrganizationSingle },
  }, async (ctx) => control(ctx, 'OrganizationRecord', 'read', await requireOrganization(ctx))),
  create: recordOp('ControlPlane.OrganizationRecord.Create', unscoped, {
    summary: 'Create an organization in a tenant', routes: [{ method: 'POST', path: O }],
    body: RS.ControlOrganizationInput, reasons: { prefix: 'Organization' },
    output: { status: 201, body: RS.ControlOrganizationSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { slug: string; name: string; tenant: string };
    const slug = checkSlug(b.slug, 'Organization');
    const name = checkName(b.name, 'Organization');
    const tenant = await readTenant(ctx.services.db, b.tenant);
    if (tenant === null) throw notFound('Tenant.NotFound', 'tenant not found');
    const row = await ctx.services.control.createOrganization({ tenantId: tenant.id, slug, name });
    return control(ctx, 'OrganizationRecord', 'created', row, 201);
  }),
  update: recordOp('ControlPlane.OrganizationRecord.Update', unscoped, {
    summary: 'Rename an organization', routes: [{ method: 'PUT', path: `${O}/:id` }], params: BY_ID,
    body: RS.ControlOrganizationUpdate, reasons: { prefix: 'Organization' },
    output: { status: 200, body: RS.ControlOrganizationSingle },
  }, async (ctx) => {
    const org = await requireOrganization(ctx);
    // A null name is "not given", as an absent one (readBody took it so; checking it threw a 500).
    const name = (ctx.inv.body as { name?: string | null }).name ?? undefined;
    if (name !== undefined) checkName(name, 'Organization');
    const row = await ctx.services.control.updateOrganization(org.tenantId, org.id, { name });
    return control(ctx, 'OrganizationRecord', 'updated', row);
  }),
  delete: recordOp('ControlPlane.OrganizationRecord.Delete', unscoped, {
    summary: 'Delete an organization (then 404)', routes: [{ method: 'DELETE', path: `${O}/:id` }], params: BY_ID,
    output: { status: 204 }, errors: [400, 401, 403, 404, 409, 422],
  }, async (ctx) => {
    const org = await requireOrganization(ctx);
    await ctx.services.control.deleteOrganization(org.tenantId, org.id);
    return { status: 204, body: undefined };
  }),
  /** `GET /api/ProjectRecord/ByOrganization/{organizationId}`: exactly the projects naming it. */
  projects: recordOp('ControlPlane.ProjectRecord.ByOrganization', unscoped, {
    summary: 'Exactly the projects of an organization', routes: [{ method: 'GET', path: 'ProjectRecord/ByOrganization/:organizationId' }],
    params: { organizationId: { description: 'Organization id.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 200, body: RS.ControlProjectRecordList },
  }, async (ctx) => {
    const org = await requireOrganization(ctx, 'organizationId');
    return control(ctx, 'ProjectRecord', 'listed', await projectsOfOrganization(ctx.services.db, org.id));
  }),
};
