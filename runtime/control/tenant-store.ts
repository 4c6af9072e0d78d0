import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { PROJECT_COLUMNS, SLUG, TENANT_COLUMNS, UUID_TEXT, type ProjectRow, type TenantRow } from './rows.js';
import { branchSchemaName } from '../publication/sql-names.js';
import { requireOrganizationOf } from './organization-store.js';

const S = PLATFORM_SCHEMA;

export async function readTenant(db: SqlExecutor, slugOrId: string): Promise<TenantRow | null> {
  const byId = UUID_TEXT.test(slugOrId);
  if (!byId && !SLUG.test(slugOrId)) return null; // names no tenant (and a NUL would fail in SQL)
  const res = await db.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM ${S}.tenants WHERE ${byId ? 'id = $1::uuid' : 'slug = $1'}`, [byId ? slugOrId.toLowerCase() : slugOrId]);
  return res.rows[0] ?? null;
}

export async function insertTenant(db: SqlClient, input: { id: string; slug: string; name: string }): Promise<TenantRow> {
  try {
    const res = await db.query<TenantRow>(`INSERT INTO ${S}.tenants (id, slug, name) VALUES ($1, $2, $3) RETURNING ${TENANT_COLUMNS}`, [input.id, input.slug, input.name]);
    return res.rows[0]!;
  } catch (err) {
    if (sqlstateOf(err) === SQLSTATE.UNIQUE_VIOLATION) throw conflict('Tenant.SlugTaken', `tenant slug '${input.slug}' is taken`, 'slug');
    throw err;
  }
}

export async function updateTenantRow(db: SqlClient, id: string, patch: { name?: string; state?: string }): Promise<TenantRow> {
  const res = await db.query<TenantRow>(
    `UPDATE ${S}.tenants SET name = COALESCE($2, name), state = COALESCE($3, state), updated_at = now() WHERE id = $1 RETURNING ${TENANT_COLUMNS}`,
    [id, patch.name ?? null, patch.state ?? null],
  );
  if (res.rows[0] === undefined) throw notFound('Tenant.NotFound', 'tenant not found');
  return res.rows[0];
}

export async function deleteTenantRow(db: SqlClient, id: string): Promise<void> {
  const projects = await db.query(`SELECT 1 FROM ${S}.projects WHERE tenant_id = $1 LIMIT 1`, [id]);
  if (projects.rows.length > 0) throw conflict('Tenant.HasProjects', 'delete the tenant\'s projects first');
  const res = await db.query(`DELETE FROM ${S}.tenants WHERE id = $1 RETURNING id`, [id]);
  if (res.rows.length === 0) throw notFound('Tenant.NotFound', 'tenant not found');
}

/** Creates a project with its `main` branch (an empty SQL schema) in one transaction. */
export async function insertProject(db: SqlClient, input: { id: string; tenantId: string; slug: string; name: string; parentProjectId: string | null; organizationId?: string | null }): Promise<ProjectRow> {
  const id = input.id;
  try {
    return await db.transaction(async (tx) => {
      if (input.parentProjectId !== null) {
        const parent = await tx.query(`SELECT 1 FROM ${S}.projects WHERE id = $1 AND tenant_id = $2`, [input.parentProjectId, input.tenantId]);
        if (parent.rows.length === 0) throw notFound('Project.ParentNotFound', 'parent project not found in this tenant');
      }
      const organizationId = input.organizationId ?? null;
      if (organizationId !== null) await requireOrganizationOf(tx, input.tenantId, organizationId);
      const res = await tx.query<ProjectRow>(
        `INSERT INTO ${S}.projects (id, tenant_id, slug, name, parent_project_id, organization_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${PROJECT_COLUMNS}`,
        [id, input.tenantId, input.slug, input.name, input.parentProjectId, organizationId],
      );
      const schema = branchSchemaName(id, 'main');
      await tx.query(`INSERT INTO ${S}.branches (project_id, name, schema_name) VALUES ($1, 'main', $2)`, [id, schema]);
      await tx.query(`CREATE SCHEMA "${schema}"`);
      return res.rows[0]!;
    });
  } catch (err) {
    if (sqlstateOf(err) === SQLSTATE.UNIQUE_VIOLATION) throw conflict('Project.SlugTaken', `project slug '${input.slug}' is taken in this tenant`, 'slug');
    throw err;
  }
}
