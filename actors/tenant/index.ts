import { defineActor } from '../define.js';
import { deleteTenantRow, insertProject, insertTenant, readTenant, updateTenantRow } from '../../runtime/control/tenant-store.js';
import { notFound } from '../../runtime/errors/service-error.js';
import type { ProjectRow, TenantRow } from '../../runtime/operations/types.js';
import type { ControlActorDeps } from '../control-deps.js';
import { deleteOrganizationRow, insertOrganization, updateOrganizationRow } from '../../runtime/control/organization-store.js';
import type { OrganizationRow } from '../../runtime/control/rows.js';

export const TENANT_KIND = 'tenant';

/** Messages the Tenant actor takes; adapters and other actors import only these shapes. */
export interface TenantMessages {
  create: { slug: string; name: string };
  update: { name?: string; state?: string };
  delete: Record<string, never>;
  createProject: { projectId: string; slug: string; name: string; parentProjectId: string | null; organizationId?: string | null };
  createOrganization: { organizationId: string; slug: string; name: string };
  updateOrganization: { organizationId: string; name?: string };
  deleteOrganization: { organizationId: string };
}

interface TenantState {
  row: TenantRow | null;
}

/**
 * Single writer of one tenant's record and of its project list (slug
 * uniqueness inside the tenant is also a database constraint, so even two
 * activations could not both win, but there is only ever one).
 */
export const tenantActor = defineActor<TenantState, ControlActorDeps>({
  kind: TENANT_KIND,
  activate: async (id, deps) => ({ row: await readTenant(deps.db, id.key) }),
  handlers: {
    async create(ctx, msg: TenantMessages['create'], deps): Promise<TenantRow> {
      const row = await insertTenant(deps.db, { id: ctx.id.key, ...msg });
      ctx.state.row = row;
      return row;
    },
    async update(ctx, msg: TenantMessages['update'], deps): Promise<TenantRow> {
      if (ctx.state.row === null) throw notFound('Tenant.NotFound', 'tenant not found');
      const row = await updateTenantRow(deps.db, ctx.id.key, msg);
      ctx.state.row = row;
      await deps.scopes.invalidate();
      return row;
    },
    async delete(ctx, _msg, deps): Promise<null> {
      if (ctx.state.row === null) throw notFound('Tenant.NotFound', 'tenant not found');
      await deleteTenantRow(deps.db, ctx.id.key);
      ctx.state.row = null;
      await deps.scopes.invalidate();
      return null;
    },
    async createProject(ctx, msg: TenantMessages['createProject'], deps): Promise<ProjectRow> {
      if (ctx.state.row === null) throw notFound('Tenant.NotFound', 'tenant not found');
      return insertProject(deps.db, { id: msg.projectId, tenantId: ctx.id.key, slug: msg.slug, name: msg.name, parentProjectId: msg.parentProjectId, organizationId: msg.organizationId ?? null });
    },
    // Organizations are the tenant's: this mailbox orders them with the project inserts that name them.
    async createOrganization(ctx, msg: TenantMessages['createOrganization'], deps): Promise<OrganizationRow> {
      if (ctx.state.row === null) throw notFound('Tenant.NotFound', 'tenant not found');
      return insertOrganization(deps.db, { id: msg.organizationId, tenantId: ctx.id.key, slug: msg.slug, name: msg.name });
    },
    async updateOrganization(ctx, msg: TenantMessages['updateOrganization'], deps): Promise<OrganizationRow> {
      if (ctx.state.row === null) throw notFound('Tenant.NotFound', 'tenant not found');
      return updateOrganizationRow(deps.db, ctx.id.key, msg.organizationId, { name: msg.name });
    },
    async deleteOrganization(ctx, msg: TenantMessages['deleteOrganization'], deps): Promise<null> {
      if (ctx.state.row === null) throw notFound('Tenant.NotFound', 'tenant not found');
      await deleteOrganizationRow(deps.db, ctx.id.key, msg.organizationId);
      return null;
    },
  },
});
