import { randomUUID } from 'node:crypto';
import { MAX_SQL_PARAMS, quoteIdent, type SqlClient, type SqlExecutor } from '../../../storage/index.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import type { RowValues } from '../../entities/input.js';
import { outboxCte } from '../../entities/outbox-cte.js';
import { statementName } from '../../entities/statement-names.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import { SqlParams } from '../../filter/to-sql.js';
import type { OperationContext } from '../types.js';
import { answerRows, checkedSelect, policyCheckFailure } from '../../policy/write-check.js';

/** Parameters the outbox CTE adds to a statement (outbox-cte.ts uses 7), with room to spare. */
const OUTBOX_PARAMS = 16;

/** Every field any row sets, in first-seen order: the INSERT's column list. */
function columnsOf(rows: readonly RowValues[]): string[] {
  const names: string[] = [];
  for (const r of rows) for (const f of r.fields) if (!names.includes(f.name)) names.push(f.name);
  return names;
}

/**
 * Rows per INSERT so that no statement passes MAX_SQL_PARAMS: 1,000 rows of
 * 66 fields are 66,000 parameters, one statement cannot carry them.
 */
function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.floor((MAX_SQL_PARAMS - OUTBOX_PARAMS) / Math.max(1, columns)));
}

/**
 * Inserts rows and their `created` outbox rows, all or nothing: one statement
 * when the parameters fit, else several statements in one transaction.
 */
export async function insertRowsAtomically(db: SqlClient, ctx: OperationContext, entity: CompiledEntity, rows: readonly RowValues[]): Promise<Record<string, unknown>[]> {
  if (rows.length <= rowsPerStatement(columnsOf(rows).length)) return insertRows(db, ctx, entity, rows);
  return db.transaction((tx) => insertRows(tx, ctx, entity, rows));
}

/**
 * Inserts rows and their `created` outbox rows, as many statements as the
 * parameter limit needs (each writes its rows and their outbox rows
 * together). More than one statement is atomic only inside a transaction:
 * callers that may pass many rows use insertRowsAtomically. Rows may set
 * different fields: a field a row omits takes the column DEFAULT.
 */
export async function insertRows(db: SqlExecutor, ctx: OperationContext, entity: CompiledEntity, rows: readonly RowValues[]): Promise<Record<string, unknown>[]> {
  const names = columnsOf(rows);
  const step = rowsPerStatement(names.length);
  if (rows.length <= step) return insertStatement(db, ctx, entity, rows, names);
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < rows.length; i += step) out.push(...await insertStatement(db, ctx, entity, rows.slice(i, i + step), names));
  return out;
}

/** One INSERT … RETURNING with its outbox CTE; `names` is the column list (a row without one of them takes its DEFAULT). */
async function insertStatement(db: SqlExecutor, ctx: OperationContext, entity: CompiledEntity, rows: readonly RowValues[], names: readonly string[]): Promise<Record<string, unknown>[]> {
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
  if (ctx.rowPolicy !== null) for (const r of rows) ctx.rowPolicy.guardWritable(entity, 'insert', r);
  const text = `WITH w AS (${insert} RETURNING ${entity.returningList}), ${outboxCte(ctx, params, 'created', changed, entity)} ${checkedSelect(ctx, entity, 'insert', params)}`;
  try {
    const res = await db.query<Record<string, unknown>>(text, params.values, rows.length === 1 ? statementName(entity, text) : undefined);
    return answerRows(ctx, entity, res.rows);
  } catch (err) {
    throw mapEntitySqlError(entity, policyCheckFailure(entity, err), 'write');
  }
}

/**
 * One INSERT of rows that different requests asked for (create-combiner.ts), all
 * setting the same fields, with one outbox row each naming its own request's
 * correlation id. Ids are drawn here, so each request gets back its own row
 * whatever order RETURNING gives. No row policy applies (the combiner only
 * takes such creates); `ctx` is any one of the requests (same scope and entity).
 */
export async function insertCombined(
  db: SqlExecutor, ctx: OperationContext, entity: CompiledEntity, rows: readonly RowValues[], correlationIds: readonly string[],
): Promise<Record<string, unknown>[]> {
  const params = new SqlParams();
  const ids = rows.map(() => randomUUID());
  const names = rows[0]!.fields.map((f) => f.name);
  const tuples = rows.map((r, i) => `(${[params.add(ids[i]), ...r.values.map((v) => params.add(v))].join(', ')})`);
  const insert = `INSERT INTO ${entity.table} (id${names.map((n) => `, ${quoteIdent(n)}`).join('')}) VALUES ${tuples.join(', ')}`;
  const perRow = { from: `w JOIN unnest(${params.add(ids)}::uuid[], ${params.add(correlationIds)}::text[]) AS c(id, correlation_id) ON c.id = w.id`, correlation: 'c.correlation_id' };
  const changed = entity.userFields.map((f) => f.name);
  const text = `WITH w AS (${insert} RETURNING ${entity.returningList}), ${outboxCte(ctx, params, 'created', changed, entity, 'w', perRow)} SELECT * FROM w`;
  const res = await db.query<Record<string, unknown>>(text, params.values, statementName(entity, text));
  const byId = new Map(res.rows.map((r) => [r.id as string, r]));
  return ids.map((id) => byId.get(id)!);
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
  const policy = ctx.rowPolicy;
  if (policy !== null) {
    policy.guardWritable(entity, 'update', input);
    // A row no update grant covers matches nothing here; explainMissedWrite then answers 403.
    const rows = policy.rowsSql(entity, 'update', 't', params);
    if (rows !== null) where += ` AND ${rows}`;
  }
  const text = `WITH w AS (UPDATE ${entity.table} AS t SET ${sets.join(', ')} WHERE ${where} RETURNING ${entity.selectList}), ${outboxCte(ctx, params, 'updated', input.fields.map((f) => f.name), entity)} ${checkedSelect(ctx, entity, 'update', params)}`;
  try {
    const res = await db.query<Record<string, unknown>>(text, params.values);
    return answerRows(ctx, entity, res.rows)[0] ?? null;
  } catch (err) {
    throw mapEntitySqlError(entity, policyCheckFailure(entity, err), 'write');
  }
}
