import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { SLUG, TENANT_COLUMNS, type TenantRow } from '../../control/rows.js';
import { readTenant } from '../../control/tenant-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { readBody } from './body.js';

const admin = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'none', grants: noGrants, execute });

async function requireTenant(ctx: OperationContext): Promise<TenantRow> {
  const t = await readTenant(ctx.services.db, ctx.inv.params.id ?? '');
  if (t === null) throw notFound('Tenant.NotFound', 'tenant not found');
  return t;
}

export const checkSlug = (slug: string, block: string): string => {
  if (!SLUG.test(slug)) throw validationFailed(`${block}.InvalidSlug`, 'slug must be 1-63 lower-case letters, digits and inner hyphens', 'slug');
  return slug;
};

const STATES = ['active', 'suspended'];

export const TENANT_SPECS = {
  list: admin('ControlPlane.TenantRecord.List', async (ctx) => {
    const res = await ctx.services.db.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${PLATFORM_SCHEMA}.tenants ORDER BY created_at, id LIMIT 1000`);
    return control(ctx, 'TenantRecord', 'listed', res.rows);
  }),
  read: admin('ControlPlane.TenantRecord.Read', async (ctx) => control(ctx, 'TenantRecord', 'read', await requireTenant(ctx))),
  create: admin('ControlPlane.TenantRecord.Create', async (ctx) => {
    const b = readBody<{ slug: string; name: string }>(ctx.inv.body, { slug: 'string', name: 'string' }, 'Tenant');
    const row = await ctx.services.control.createTenant({ slug: checkSlug(b.slug, 'Tenant'), name: b.name });
    return control(ctx, 'TenantRecord', 'created', row, 201);
  }),
  update: admin('ControlPlane.TenantRecord.Update', async (ctx) => {
    const t = await requireTenant(ctx);
    const b = readBody<{ name?: string; state?: string }>(ctx.inv.body, { name: 'string?', state: 'string?' }, 'Tenant');
    if (b.state !== undefined && !STATES.includes(b.state)) throw validationFailed('Tenant.InvalidState', `state must be one of ${STATES.join(', ')}`, 'state');
    const row = await ctx.services.control.updateTenant(t.id, b);
    return control(ctx, 'TenantRecord', 'updated', row);
  }),
  delete: admin('ControlPlane.TenantRecord.Delete', async (ctx) => {
    const t = await requireTenant(ctx);
    await ctx.services.control.deleteTenant(t.id);
    return { status: 204, body: undefined };
  }),
};
