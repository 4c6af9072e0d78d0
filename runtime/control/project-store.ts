import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { PROJECT_COLUMNS, SLUG, UUID_TEXT, type ProjectRow } from './rows.js';

const S = PLATFORM_SCHEMA;

export async function readProject(db: SqlExecutor, tenantId: string | null, slugOrId: string): Promise<ProjectRow | null> {
  const byId = UUID_TEXT.test(slugOrId);
  if (!byId && !SLUG.test(slugOrId)) return null; // names no project (and a NUL would fail in SQL)
  const params: unknown[] = [byId ? slugOrId.toLowerCase() : slugOrId];
  let where = byId ? 'id = $1::uuid' : 'slug = $1';
  if (tenantId !== null) {
    params.push(tenantId);
    where += ' AND tenant_id = $2';
  } else if (!byId) {
    return null; // a slug is only unique within a tenant
  }
  const res = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM ${S}.projects WHERE ${where}`, params);
  return res.rows[0] ?? null;
}

/** `organizationId`: undefined keeps it, null clears it, an id (of the project's tenant, checked by the caller) sets it. */
export async function updateProjectRow(db: SqlClient, id: string, patch: { name?: string; state?: string; settings?: Record<string, unknown>; organizationId?: string | null }): Promise<ProjectRow> {
  const res = await db.query<ProjectRow>(
    `UPDATE ${S}.projects SET name = COALESCE($2, name), state = COALESCE($3, state), settings = COALESCE($4::jsonb, settings),
      organization_id = CASE WHEN $5::boolean THEN $6::uuid ELSE organization_id END, updated_at = now() WHERE id = $1 RETURNING ${PROJECT_COLUMNS}`,
    [id, patch.name ?? null, patch.state ?? null, patch.settings === undefined ? null : JSON.stringify(patch.settings), patch.organizationId !== undefined, patch.organizationId ?? null],
  ).catch((err: unknown) => {
    // The organization was deleted between the caller's check and this write.
    if (sqlstateOf(err) === SQLSTATE.FOREIGN_KEY_VIOLATION) throw notFound('Organization.NotFound', 'organization not found in the project\'s tenant');
    throw err;
  });
  if (res.rows[0] === undefined) throw notFound('Project.NotFound', 'project not found');
  return res.rows[0];
}

/** Deletes a project with no child projects: its branch schemas, platform rows and events go with it. */
export async function deleteProjectRow(db: SqlClient, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const children = await tx.query(`SELECT 1 FROM ${S}.projects WHERE parent_project_id = $1 LIMIT 1`, [id]);
    if (children.rows.length > 0) throw conflict('Project.HasChildren', 'delete or move the child projects first');
    const branches = await tx.query<{ schema_name: string }>(`SELECT schema_name FROM ${S}.branches WHERE project_id = $1`, [id]);
    for (const b of branches.rows) await tx.query(`DROP SCHEMA IF EXISTS "${b.schema_name}" CASCADE`);
    for (const t of ['idempotency_keys', 'outbox', 'events', 'schema_journal']) await tx.query(`DELETE FROM ${S}.${t} WHERE project_id = $1`, [id]);
    const res = await tx.query(`DELETE FROM ${S}.projects WHERE id = $1 RETURNING id`, [id]);
    if (res.rows.length === 0) throw notFound('Project.NotFound', 'project not found');
  });
}

type Direction = 'children' | 'descendants' | 'ancestors';

/** Hierarchy reads with recursive CTEs (PostgreSQL, CockroachDB and PGlite all run them). */
export async function projectRelatives(db: SqlExecutor, id: string, direction: Direction): Promise<ProjectRow[]> {
  const cols = PROJECT_COLUMNS.replace(/(^|, )(\w+)( AS|,|$)/g, '$1p.$2$3').replace(/p\.p\./g, 'p.');
  if (direction === 'children') {
    return (await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM ${S}.projects WHERE parent_project_id = $1 ORDER BY created_at, id`, [id])).rows;
  }
  const step = direction === 'descendants' ? 'p.parent_project_id = r.id' : 'p.id = r.parent_project_id';
  const text = `WITH RECURSIVE r AS (
      SELECT id, parent_project_id, 0 AS depth FROM ${S}.projects WHERE id = $1
      UNION ALL
      SELECT p.id, p.parent_project_id, r.depth + 1 FROM ${S}.projects p JOIN r ON ${step} WHERE r.depth < 64)
    SELECT ${cols} FROM r JOIN ${S}.projects p ON p.id = r.id WHERE r.depth > 0 ORDER BY r.depth, p.created_at, p.id`;
  return (await db.query<ProjectRow>(text, [id])).rows;
}
