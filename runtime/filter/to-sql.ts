import { quoteIdent } from '../../storage/index.js';
import { toSqlParam } from '../entities/field-values.js';
import type { FieldDef } from '../publication/model.js';
import type { FilterNode } from './ast.js';

/** Collects positional parameters while SQL text is built. */
export class SqlParams {
  readonly values: unknown[] = [];
  constructor(offset = 0) {
    for (let i = 0; i < offset; i++) this.values.push(undefined);
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export interface SqlFilterTarget {
  /** Qualified table of an entity, and whether it soft-deletes (hidden rows never match). */
  table(entityName: string): { sql: string; softDelete: boolean };
  field(entityName: string, fieldName: string): FieldDef;
  /**
   * Extra condition on a related entity a filter enters (the caller's read
   * policy on it, runtime/policy/): SQL over `alias`, or null for none.
   */
  relatedPolicy?(entityName: string, alias: string, depth: number, params: SqlParams): string | null;
}

const CAST: Record<string, string> = { Decimal: '::numeric', DateTime: '::timestamptz', Instant: '::timestamptz', Int: '::integer' };

/**
 * Compiles a parsed filter to a SQL boolean expression over `alias`.
 * Values always travel as parameters; identifiers were validated against
 * the model, and are quoted anyway.
 */
export function filterToSql(node: FilterNode, entity: string, alias: string, target: SqlFilterTarget, params: SqlParams, depth = 0): string {
  switch (node.kind) {
    case 'and':
      // An empty filter object (`{}`, `{ not: {} }`) parses to an empty 'and': no condition.
      if (node.items.length === 0) return 'TRUE';
      return `(${node.items.map((n) => filterToSql(n, entity, alias, target, params, depth)).join(' AND ')})`;
    case 'or':
      return `(${node.items.map((n) => filterToSql(n, entity, alias, target, params, depth)).join(' OR ')})`;
    case 'not':
      return `(NOT ${filterToSql(node.item, entity, alias, target, params, depth)})`;
    case 'related': {
      const rel = target.table(node.entity);
      const ra = `r${depth + 1}`;
      const live = rel.softDelete ? ` AND ${ra}."deletedAt" IS NULL` : '';
      const policy = target.relatedPolicy?.(node.entity, ra, depth + 1, params) ?? null;
      const allowed = policy === null ? '' : ` AND ${policy}`;
      return `EXISTS (SELECT 1 FROM ${rel.sql} ${ra} WHERE ${ra}.id = ${alias}.${quoteIdent(node.field)}${live}${allowed} AND ${filterToSql(node.item, node.entity, ra, target, params, depth + 1)})`;
    }
    case 'cmp': {
      const f = target.field(entity, node.field);
      const col = `${alias}.${quoteIdent(node.field)}`;
      const cast = CAST[f.type] ?? '';
      const p = (v: unknown): string => params.add(toSqlParam(f, v)) + cast;
      switch (node.op) {
        case 'eq':
          return `${col} = ${p(node.value)}`;
        case 'ne':
          return `${col} IS DISTINCT FROM ${p(node.value)}`;
        case 'gt':
          return `${col} > ${p(node.value)}`;
        case 'lt':
          return `${col} < ${p(node.value)}`;
        case 'between': {
          const [lo, hi] = node.value as [unknown, unknown];
          return `${col} BETWEEN ${p(lo)} AND ${p(hi)}`;
        }
        case 'in':
          return `(${(node.value as unknown[]).map((v) => `${col} = ${p(v)}`).join(' OR ')})`;
        case 'like':
          return `${col} LIKE ${params.add(node.value)}`;
        case 'isNull':
          return node.value === true ? `${col} IS NULL` : `${col} IS NOT NULL`;
      }
    }
  }
}
