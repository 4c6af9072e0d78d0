import { quoteIdent } from '../../storage/index.js';
import { filterToSql, SqlParams, type SqlFilterTarget } from '../filter/to-sql.js';
import type { FieldDef } from '../publication/model.js';
import { toSqlParam } from './field-values.js';
import type { CompiledEntity } from './compiled-entity.js';
import { encodeCursor } from './cursor.js';
import type { ListParams, SortKey } from './list-params.js';
import type { ReadPolicy } from './read-policy.js';

const CAST: Record<string, string> = { Decimal: '::numeric', DateTime: '::timestamptz', Instant: '::timestamptz', Int: '::integer', ID: '' };

export const filterTarget = (entity: CompiledEntity): SqlFilterTarget => ({
  table: (name) => {
    const e = entity.entityName === name ? entity : entity.peer(name);
    return { sql: e.table, softDelete: e.softDelete };
  },
  field: (entityName, fieldName) => (entity.entityName === entityName ? entity : entity.peer(entityName)).queryableFields.get(fieldName)!,
});

/** WHERE clause (without the keyword) for the live rows matching the filter; 'TRUE' when none. */
export function whereSql(entity: CompiledEntity, params: ListParams, sql: SqlParams, extra: string[] = [], policy: ReadPolicy | null = null): string {
  const parts = [...extra];
  if (entity.softDelete) parts.push('t."deletedAt" IS NULL');
  if (policy !== null) {
    // The caller's row policy comes before its filter: no request filter widens it.
    const rows = policy.rowsSql(entity, 'read', 't', sql);
    if (rows !== null) parts.push(rows);
  }
  if (params.filter !== null) parts.push(filterToSql(params.filter, entity.entityName, 't', policy === null ? filterTarget(entity) : policy.target(entity), sql));
  return parts.length === 0 ? 'TRUE' : parts.join(' AND ');
}

/**
 * The id tie-breaker runs in the direction of the last sort key, so `-createdAt` orders by
 * (createdAt DESC, id DESC) and the (createdAt, id) index serves it with a backward scan;
 * a mixed direction would make PostgreSQL sort every row that passes the filter.
 */
const idDescending = (sort: readonly SortKey[]): boolean => sort.length > 0 && sort[sort.length - 1]!.desc;

const orderSql = (sort: readonly SortKey[]): string =>
  [...sort.map((k) => `t.${quoteIdent(k.field)} ${k.desc ? 'DESC' : 'ASC'}`), `t.id ${idDescending(sort) ? 'DESC' : 'ASC'}`].join(', ');

/** One key of a keyset order: a column, its direction, and its field (null for `id`). */
export interface KeysetKey {
  col: string;
  desc: boolean;
  field: FieldDef | null;
}

/** The (sort…, id) keys of `sort` over alias `t`, the id tie-breaker in the last key's direction. */
export const keysetKeys = (entity: CompiledEntity, sort: readonly SortKey[], alias = 't'): KeysetKey[] => [
  ...sort.map((k) => ({ col: `${alias}.${quoteIdent(k.field)}`, desc: k.desc, field: entity.queryableFields.get(k.field)! })),
  { col: `${alias}.id`, desc: idDescending(sort), field: null },
];

/**
 * Keyset predicate "strictly after the cursor row" in the keys' order.
 * PostgreSQL orders NULLs last ascending and first descending; the
 * predicate follows the same rule so pages never skip or repeat rows.
 * With every direction flipped it is "strictly before" (backward pages).
 */
export function keysetAfterSql(keys: readonly KeysetKey[], values: readonly unknown[], sql: SqlParams): string {
  // Values were checked against their key's type when the cursor was decoded (cursor.ts).
  const param = (i: number): string => {
    const f = keys[i]!.field;
    return f === null ? `${sql.add(values[i])}::uuid` : sql.add(toSqlParam(f, values[i])) + (CAST[f.type] ?? '');
  };
  // No NULL can occur and every key runs one way: a row comparison says the same as the expansion below, and
  // PostgreSQL reads it as one index range (the expansion makes every page rescan the index from its start).
  const desc = keys[0]!.desc;
  if (keys.every((k, i) => k.desc === desc && values[i] !== null && (k.field === null || !k.field.nullable))) {
    return `((${keys.map((k) => k.col).join(', ')}) ${desc ? '<' : '>'} (${keys.map((_, i) => param(i)).join(', ')}))`;
  }
  const equal = (i: number): string => (values[i] === null ? `${keys[i]!.col} IS NULL` : `${keys[i]!.col} = ${param(i)}`);
  const after = (i: number): string | null => {
    const { col, desc } = keys[i]!;
    const v = values[i];
    if (!desc) return v === null ? null : `(${col} > ${param(i)} OR ${col} IS NULL)`;
    return v === null ? `${col} IS NOT NULL` : `${col} < ${param(i)}`;
  };
  const ors: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const a = after(i);
    if (a === null) continue;
    const eqs = [];
    for (let j = 0; j < i; j++) eqs.push(equal(j));
    ors.push(eqs.length === 0 ? a : `(${eqs.join(' AND ')} AND ${a})`);
  }
  return ors.length === 0 ? 'FALSE' : `(${ors.join(' OR ')})`;
}

const afterCursorSql = (entity: CompiledEntity, sort: readonly SortKey[], values: readonly unknown[], sql: SqlParams): string =>
  keysetAfterSql(keysetKeys(entity, sort), values, sql);

export interface ListQuery {
  text: string;
  values: unknown[];
  /**
   * Worth a prepared statement: the text is one of few per filter shape. An OFFSET page's
   * text carries its page number, so a client paging deep would spend the process's
   * bounded statement names (statement-names.ts) one page at a time.
   */
  reusable: boolean;
}

/** SELECT for one page: pageSize+1 rows so we know whether a next page exists. */
export function listQuery(entity: CompiledEntity, params: ListParams, extra: (sql: SqlParams) => string[] = () => [], policy: ReadPolicy | null = null): ListQuery {
  const sql = new SqlParams();
  const conds = extra(sql);
  if (params.cursor !== null) conds.push(afterCursorSql(entity, params.sort, params.cursor.values, sql));
  const where = whereSql(entity, params, sql, conds, policy);
  const offset = params.cursor === null && params.page > 1 ? ` OFFSET ${(params.page - 1) * params.pageSize}` : '';
  // Masked fields are never selected: the projection is precomputed per (publication, grant set).
  const select = policy === null ? entity.selectList : policy.read(entity).selectList;
  const text = `SELECT ${select} FROM ${entity.table} t WHERE ${where} ORDER BY ${orderSql(params.sort)} LIMIT ${params.pageSize + 1}${offset}`;
  return { text, values: sql.values, reusable: offset === '' };
}

export function countQuery(entity: CompiledEntity, params: ListParams, extra: (sql: SqlParams) => string[] = () => [], policy: ReadPolicy | null = null): ListQuery {
  const sql = new SqlParams();
  const where = whereSql(entity, params, sql, extra(sql), policy);
  return { text: `SELECT count(*)::int AS n FROM ${entity.table} t WHERE ${where}`, values: sql.values, reusable: true };
}

/** The cursor that continues after `last`. */
export function nextCursor(params: ListParams, last: Record<string, unknown>): string {
  return encodeCursor(params.shapeKey, [...params.sort.map((k) => last[k.field] ?? null), last.id], params.page + 1);
}
