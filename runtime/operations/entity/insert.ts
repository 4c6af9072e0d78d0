import { quoteIdent, type SqlExecutor } from '../../../storage/index.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import type { RowValues } from '../../entities/input.js';
import { outboxCte } from '../../entities/outbox-cte.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import { SqlParams } from '../../filter/to-sql.js';
import type { OperationContext } from '../types.js';

/**
 * Inserts rows and their `created` outbox rows in one statement. Rows may
 * set different fields: a field a row omits takes the column DEFAULT.
 */
export async function insertRows(db: SqlExecutor, ctx: OperationContext, entity: CompiledEntity, rows: readonly RowValues[]): Promise<Record<string, unknown>[]> {
  const names: string[] = [];
  for (const r of rows) for (const f of r.fields) if (!names.includes(f.name)) names.push(f.name);
  const params = new SqlParams();
  let insert: string;
  if (names.length === 0) {
    insert = rows.length === 1 ? `INSERT INTO ${entity.table} DEFAULT VALUES` : `INSERT INTO ${entity.table} (id) VALUES ${rows.map(() => '(DEFAULT)').join(', ')}`;
  } else {
    const tuples = rows.map((r) => {
      const byName = new Map(r.fields.map((f, i) => [f.name, r.values[i]]));
      return `(${names.map((n) => (byName.has(n) ? params.add(byName.get(n)) : 'DEFAULT')).join(', ')})`;
    });
    insert = `INSERT INTO ${entity.table} (${names.map(quoteIdent).join(', ')}) VALUES ${tuples.join(', ')}`;
  }
  const changed = entity.userFields.map((f) => f.name);
  const text = `WITH w AS (${insert} RETURNING ${entity.returningList}), ${outboxCte(ctx, params, 'created', changed, entity)} SELECT * FROM w`;
  try {
    const res = await db.query<Record<string, unknown>>(text, params.values);
    return res.rows;
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}

/**
 * Updates one live row (optionally only at a concurrency token) and writes
 * its `updated` outbox row in the same statement. Returns null when no row matched.
 */
export async function updateRow(
  db: SqlExecutor, ctx: OperationContext, entity: CompiledEntity, id: string, input: RowValues, token: string | null,
  /** Also require `field = value` (relation detach). */
  match: { field: string; value: string } | null = null,
): Promise<Record<string, unknown> | null> {
  const params = new SqlParams();
  const sets = input.fields.map((f, i) => `${quoteIdent(f.name)} = ${params.add(input.values[i])}`);
  sets.push('"updatedAt" = now()', '"concurrencyToken" = gen_random_uuid()');
  let where = `t.id = ${params.add(id)}::uuid${entity.liveClause}`;
  if (token !== null) where += ` AND t."concurrencyToken"::text = ${params.add(token)}`;
  if (match !== null) where += ` AND t.${quoteIdent(match.field)} = ${params.add(match.value)}::uuid`;
  const text = `WITH w AS (UPDATE ${entity.table} AS t SET ${sets.join(', ')} WHERE ${where} RETURNING ${entity.selectList}), ${outboxCte(ctx, params, 'updated', input.fields.map((f) => f.name), entity)} SELECT * FROM w`;
  try {
    const res = await db.query<Record<string, unknown>>(text, params.values);
    return res.rows[0] ?? null;
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}
