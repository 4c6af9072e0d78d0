import type { ProjectRow, TenantRow } from '../operations/types.js';

/** Column lists that map platform rows to their API shape in SQL, once. */
export const TENANT_COLUMNS = `id, slug, name, state, created_at AS "createdAt", updated_at AS "updatedAt"`;
export const PROJECT_COLUMNS = `id, tenant_id AS "tenantId", slug, name, parent_project_id AS "parentProjectId", state, settings, created_at AS "createdAt", updated_at AS "updatedAt"`;

export type { ProjectRow, TenantRow };

export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
