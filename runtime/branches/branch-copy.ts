import { randomBytes } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor, quoteIdent } from '../../storage/index.js';
import { createEntityStatements, foreignKeyStatements } from '../publication/ddl.js';
import { findEntity, type EntityDef } from '../publication/model.js';
import { qualifiedTable } from '../publication/sql-names.js';
import { readHead } from '../control/schema-change.js';
import { copySourceAssets } from '../source-assets/copy.js';

const S = PLATFORM_SCHEMA;

/** A new branch's SQL schema: the project's prefix and a random suffix (branch names may be 63 characters; identifiers may not be longer). */
const newSchemaName = (projectId: string): string => `p_${projectId.replace(/-/g, '')}_b${randomBytes(8).toString('hex')}`;

/** The columns a row copy carries: generated ones and the fields both definitions have. */
function sharedColumns(target: EntityDef, source: EntityDef): string[] {
  const cols = ['id', 'createdAt', 'updatedAt', 'concurrencyToken'];
  if (target.softDelete && source.softDelete) cols.push('deletedAt');
  for (const f of target.fields) if (source.fields.some((g) => g.name === f.name && g.type === f.type)) cols.push(f.name);
  return cols;
}

export interface BranchCopy {
  projectId: string;
  name: string;
  /** The branch recorded as `base` (null for none). */
  base: string | null;
  /** The branch whose head publication (schema) the new branch starts from. */
  schemaFrom: string;
  /** The branch whose rows are copied, or null for an empty branch. */
  rowsFrom: string | null;
  correlationId: string;
}

/**
 * Creates a branch inside the caller's transaction: a new SQL schema with the
 * tables of `schemaFrom`'s head, a copy of `rowsFrom`'s rows (same ids), the
 * branch row whose head is `schemaFrom`'s head version, and that publication
 * recorded under the new branch too (same version, model and hash: the same
 * publication, so no version is spent). Cost: one INSERT … SELECT per entity,
 * linear in the rows copied (docs/branches.md).
 */
export async function copyBranch(tx: SqlExecutor, c: BranchCopy): Promise<void> {
  const head = await readHead(tx, c.projectId, c.schemaFrom, true);
  const rows = c.rowsFrom === null ? null : c.rowsFrom === c.schemaFrom ? head : await readHead(tx, c.projectId, c.rowsFrom, true);
  const schema = newSchemaName(c.projectId);
  await tx.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
  // Tables first without their reference constraints, rows next, constraints last: entities may reference each
  // other in a cycle (A.b → B, B.a → A; Employee.manager → Employee), which no creation or copy order satisfies.
  // Adding a constraint checks every copied row, so the branch holds what base held; all in the caller's transaction.
  const entities = head.model.entities;
  for (const e of entities) for (const stmt of createEntityStatements(schema, e, { foreignKeys: false })) await tx.query(stmt);
  if (rows !== null) {
    for (const e of entities) {
      const src = findEntity(rows.model, e.entityName);
      if (src === undefined) continue;
      const cols = sharedColumns(e, src).map(quoteIdent).join(', ');
      await tx.query(`INSERT INTO ${qualifiedTable(schema, e.entityName)} (${cols}) SELECT ${cols} FROM ${qualifiedTable(rows.schema, e.entityName)}`);
    }
  }
  for (const e of entities) for (const stmt of foreignKeyStatements(schema, e)) await tx.query(stmt);
  await tx.query(
    `INSERT INTO ${S}.branches (project_id, name, schema_name, head_version, base) VALUES ($1, $2, $3, $4, $5)`,
    [c.projectId, c.name, schema, head.version, c.base],
  );
  // Source assets are code the schema's handlers name (CONTRACT "Source assets"): they come with the schema.
  await copySourceAssets(tx, c.projectId, c.schemaFrom, c.name);
  if (head.version > 0) {
    await tx.query(
      `INSERT INTO ${S}.publications (project_id, branch, version, model, descriptor_hash, correlation_id, created_at)
       SELECT project_id, $3, version, model, descriptor_hash, correlation_id, created_at FROM ${S}.publications
        WHERE project_id = $1 AND branch = $2 AND version = $4`,
      [c.projectId, c.schemaFrom, c.name, head.version],
    );
  }
}

/** Drops a branch's schema with its data and every record of it (publications and its sandbox go by CASCADE). */
export async function dropBranch(tx: SqlExecutor, projectId: string, name: string, schema: string): Promise<void> {
  await tx.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  for (const table of ['schema_journal', 'schema_snapshots', 'schema_transitions']) {
    await tx.query(`DELETE FROM ${S}.${table} WHERE project_id = $1 AND branch = $2`, [projectId, name]);
  }
  await tx.query(`DELETE FROM ${S}.branches WHERE project_id = $1 AND name = $2`, [projectId, name]);
}
