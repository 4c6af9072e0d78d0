/** Column lists that map platform rows to their API shape in SQL, once. */
export const TENANT_COLUMNS = `id, slug, name, state, created_at AS "createdAt", updated_at AS "updatedAt"`;
export const PROJECT_COLUMNS = `id, tenant_id AS "tenantId", slug, name, parent_project_id AS "parentProjectId", organization_id AS "organizationId", state, settings, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A tenant as the control plane stores it (runtime/control/). */
export interface TenantRow { id: string; slug: string; name: string; state: string; createdAt: string; updatedAt: string }

/** A project as the control plane stores it; `settings` is the project's own JSON. */
export interface ProjectRow { id: string; tenantId: string; slug: string; name: string; parentProjectId: string | null; organizationId?: string | null; state: string; settings: Record<string, unknown>; createdAt: string; updatedAt: string }

export const ORGANIZATION_COLUMNS = `id, tenant_id AS "tenantId", slug, name, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** An organization: a named group of one tenant's projects. */
export interface OrganizationRow { id: string; tenantId: string; slug: string; name: string; createdAt: string; updatedAt: string }

export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
