import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { SLUG, TENANT_COLUMNS, type TenantRow } from '../../control/rows.js';
import { readTenant } from '../../control/tenant-store.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { PROJECT_SCHEMAS as S } from './project-schemas.js';

export const TENANTS_TAG: TagDecl = { name: 'Tenants', description: 'Tenants of the platform (`/TenantRecord`), platform admin only.' };

type AdminContract = Omit<OperationContract, 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/** Platform admin only, no scope headers (the path or body names the tenant or project); never metered. */
export const platformAdminOp = (id: string, contract: AdminContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'none', grants: noGrants, execute,
  contract: { errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/** Reason codes of the tenant bodies' 422s (`Tenant.UnknownProperty`, `Tenant.MissingProperty`, …). */
const REASONS = { prefix: 'Tenant' };
const BY_ID = { id: { description: 'Tenant id or slug.' } };

async function requireTenant(ctx: OperationContext): Promise<TenantRow> {
  const t = await readTenant(ctx.services.db, ctx.inv.params.id ?? '');
  if (t === null) throw notFound('Tenant.NotFound', 'tenant not found');
  return t;
}

/** The slug rule, with its own reason code (`<block>.InvalidSlug`), after the body's schema took the slug as a string. */
export const checkSlug = (slug: string, block: string): string => {
  if (!SLUG.test(slug)) throw validationFailed(`${block}.InvalidSlug`, 'slug must be 1-63 lower-case letters, digits and inner hyphens', 'slug');
  return slug;
};

const STATES = ['active', 'suspended'];

export const TENANT_SPECS = {
  list: platformAdminOp('ControlPlane.TenantRecord.List', {
    tag: TENANTS_TAG, summary: 'List tenants (oldest first, at most 1,000)', routes: [{ method: 'GET', path: 'TenantRecord' }],
    output: { status: 200, body: S.ControlTenantList },
  }, async (ctx) => {
    const res = await ctx.services.db.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${PLATFORM_SCHEMA}.tenants ORDER BY created_at, id LIMIT 1000`);
    return control(ctx, 'TenantRecord', 'listed', res.rows);
  }),
  read: platformAdminOp('ControlPlane.TenantRecord.Read', {
    tag: TENANTS_TAG, summary: 'Read a tenant', routes: [{ method: 'GET', path: 'TenantRecord/:id' }], params: BY_ID,
    output: { status: 200, body: S.ControlTenantSingle },
  }, async (ctx) => control(ctx, 'TenantRecord', 'read', await requireTenant(ctx))),
  create: platformAdminOp('ControlPlane.TenantRecord.Create', {
    tag: TENANTS_TAG, summary: 'Create a tenant', routes: [{ method: 'POST', path: 'TenantRecord' }],
    body: S.ControlTenantInput, reasons: REASONS, output: { status: 201, body: S.ControlTenantSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { slug: string; name: string };
    const row = await ctx.services.control.createTenant({ slug: checkSlug(b.slug, 'Tenant'), name: b.name });
    return control(ctx, 'TenantRecord', 'created', row, 201);
  }),
  update: platformAdminOp('ControlPlane.TenantRecord.Update', {
    tag: TENANTS_TAG, summary: 'Rename a tenant or change its state (`active`, `suspended`)', routes: [{ method: 'PUT', path: 'TenantRecord/:id' }], params: BY_ID,
    body: S.ControlTenantUpdate, reasons: REASONS, output: { status: 200, body: S.ControlTenantSingle },
  }, async (ctx) => {
    const t = await requireTenant(ctx);
    const b = ctx.inv.body as { name?: string | null; state?: string | null };
    if (b.state !== undefined && !STATES.includes(b.state as string)) throw validationFailed('Tenant.InvalidState', `state must be one of ${STATES.join(', ')}`, 'state');
    const row = await ctx.services.control.updateTenant(t.id, b as { name?: string; state?: string });
    return control(ctx, 'TenantRecord', 'updated', row);
  }),
  delete: platformAdminOp('ControlPlane.TenantRecord.Delete', {
    tag: TENANTS_TAG, summary: 'Delete a tenant', routes: [{ method: 'DELETE', path: 'TenantRecord/:id' }], params: BY_ID,
    output: { status: 204 }, errors: [400, 401, 403, 404, 409, 422],
  }, async (ctx) => {
    await ctx.services.control.deleteTenant((await requireTenant(ctx)).id);
    return noContent;
  }),
};
