import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { ORGANIZATION_COLUMNS, PROJECT_COLUMNS, UUID_TEXT, type OrganizationRow, type ProjectRow } from './rows.js';

const S = PLATFORM_SCHEMA;

/** Organizations (CONTRACT: Control plane, Records). Writes come from the Tenant actor only. */
export async function readOrganization(db: SqlExecutor, id: string): Promise<OrganizationRow | null> {
  if (!UUID_TEXT.test(id)) return null; // names no organization (and a NUL would fail in SQL)
  const res = await db.query<OrganizationRow>(`SELECT ${ORGANIZATION_COLUMNS} FROM ${S}.organizations WHERE id = $1::uuid`, [id.toLowerCase()]);
  return res.rows[0] ?? null;
}

export async function listOrganizations(db: SqlExecutor, tenantId: string | null): Promise<OrganizationRow[]> {
  const where = tenantId === null ? '' : ' WHERE tenant_id = $1';
  const res = await db.query<OrganizationRow>(`SELECT ${ORGANIZATION_COLUMNS} FROM ${S}.organizations${where} ORDER BY created_at, id LIMIT 1000`, tenantId === null ? [] : [tenantId]);
  return res.rows;
}

export async function insertOrganization(db: SqlClient, input: { id: string; tenantId: string; slug: string; name: string }): Promise<OrganizationRow> {
  try {
    const res = await db.query<OrganizationRow>(
      `INSERT INTO ${S}.organizations (id, tenant_id, slug, name) VALUES ($1, $2, $3, $4) RETURNING ${ORGANIZATION_COLUMNS}`,
      [input.id, input.tenantId, input.slug, input.name],
    );
    return res.rows[0]!;
  } catch (err) {
    if (sqlstateOf(err) === SQLSTATE.UNIQUE_VIOLATION) throw conflict('Organization.SlugTaken', `organization slug '${input.slug}' is taken in this tenant`, 'slug');
    throw err;
  }
}

export async function updateOrganizationRow(db: SqlClient, tenantId: string, id: string, patch: { name?: string }): Promise<OrganizationRow> {
  const res = await db.query<OrganizationRow>(
    `UPDATE ${S}.organizations SET name = COALESCE($3, name), updated_at = now() WHERE id = $1 AND tenant_id = $2 RETURNING ${ORGANIZATION_COLUMNS}`,
    [id, tenantId, patch.name ?? null],
  );
  if (res.rows[0] === undefined) throw notFound('Organization.NotFound', 'organization not found');
  return res.rows[0];
}

/** Deletes an organization no project names (409 otherwise: move or delete those projects first). */
export async function deleteOrganizationRow(db: SqlClient, tenantId: string, id: string): Promise<void> {
  const hasProjects = () => conflict('Organization.HasProjects', 'move or delete the organization\'s projects first');
  await db.transaction(async (tx) => {
    const used = await tx.query(`SELECT 1 FROM ${S}.projects WHERE organization_id = $1 LIMIT 1`, [id]);
    if (used.rows.length > 0) throw hasProjects();
    const res = await tx.query(`DELETE FROM ${S}.organizations WHERE id = $1 AND tenant_id = $2 RETURNING id`, [id, tenantId]);
    if (res.rows.length === 0) throw notFound('Organization.NotFound', 'organization not found');
  }).catch((err: unknown) => {
    // A project moved into it (Project actor) between the check and the delete: the RESTRICT key refuses.
    const state = sqlstateOf(err);
    if (state === SQLSTATE.FOREIGN_KEY_VIOLATION || state === SQLSTATE.RESTRICT_VIOLATION) throw hasProjects();
    throw err;
  });
}

export async function projectsOfOrganization(db: SqlExecutor, organizationId: string): Promise<ProjectRow[]> {
  const res = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM ${S}.projects WHERE organization_id = $1 ORDER BY created_at, id LIMIT 1000`, [organizationId]);
  return res.rows;
}

/** 404 unless the organization exists in the tenant (a project names only an organization of its own tenant). */
export async function requireOrganizationOf(db: SqlExecutor, tenantId: string, organizationId: string): Promise<void> {
  const res = await db.query(`SELECT 1 FROM ${S}.organizations WHERE id = $1 AND tenant_id = $2`, [organizationId.toLowerCase(), tenantId]);
  if (res.rows.length === 0) throw notFound('Organization.NotFound', 'organization not found in the project\'s tenant');
}
