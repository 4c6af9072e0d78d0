import { quoteIdent } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';
import type { FilterNode } from '../filter/ast.js';
import { parseFilter } from '../filter/parse.js';
import { filterToSql, SqlParams } from '../filter/to-sql.js';
import type { RowPolicy } from '../policy/row-policy.js';
import type { CompiledEntity } from './compiled-entity.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { filterTarget, keysetAfterSql, keysetKeys, type KeysetKey } from './list.js';
import type { SortKey } from './list-params.js';
import { MASKED, type PageResult, type PageShape, type RowShape, type ShapedRow } from './shape.js';

/** json_build_object takes at most 100 arguments; wider rows are built with row_to_json over a sub-select. */
const MAX_BUILD_PAIRS = 50;
/** Hidden key of a row's keyset values (for cursors) inside the statement's JSON. */
const KEY = '$k';

/** A page's arguments, checked and resolved against its entity before any SQL is written. */
interface PlannedPage {
  entity: CompiledEntity;
  shape: PageShape;
  filter: FilterNode | null;
  /** Keyset keys in the order rows are read (reversed for a backward page). */
  keys: (alias: string) => KeysetKey[];
  backward: boolean;
  size: number;
  after: unknown[] | null;
  before: unknown[] | null;
  shapeKey: string;
}

const flip = (sort: readonly SortKey[]): SortKey[] => sort.map((k) => ({ field: k.field, desc: !k.desc }));

/**
 * Plans a shaped read (shape.ts) into one SQL statement: every row is built
 * as JSON in the database, a toOne part as a correlated sub-select on the
 * related row's primary key, a toMany page as a correlated sub-select with
 * its own filter, keyset window and count. The caller's row policy applies
 * at every level (a hidden row is absent, a masked column is never read),
 * so nesting widens nothing. Parameters are shared by the whole statement.
 */
export class ShapePlanner {
  readonly sql = new SqlParams();
  private aliases = 0;
  /** Each nested page as planned, for reading its result back (a shape node occurs once per statement). */
  private readonly planned = new Map<PageShape, PlannedPage>();

  constructor(private readonly policy: RowPolicy | null, private readonly maxPageSize: number) {}

  /** `SELECT <page json>`: one page of `entity` rows (a list root). */
  pageStatement(entity: CompiledEntity, shape: PageShape): { text: string; values: unknown[]; finish: (json: unknown) => PageResult } {
    const planned = this.planPage(entity, shape);
    const text = `SELECT ${this.pageJson(planned, () => [])} AS page`;
    return { text, values: this.sql.values, finish: (json) => this.finishPage(planned, json) };
  }

  /** `SELECT <row json>` of the row with `id`, when it exists and the caller may read it (a one-row root). */
  rowStatement(entity: CompiledEntity, shape: RowShape, id: string): { text: string; values: unknown[]; finish: (json: unknown) => ShapedRow } {
    const a = this.alias();
    const where = this.liveAndAllowed(entity, a, [`${a}.id = ${this.sql.add(id)}::uuid`]);
    const text = `SELECT ${this.rowJson(entity, shape, a, null)} AS row FROM ${entity.table} ${a} WHERE ${where}`;
    return { text, values: this.sql.values, finish: (json) => this.finishRow(entity, shape, json as Record<string, unknown>) };
  }

  private alias(): string {
    return `g${this.aliases++}`;
  }

  /** The caller's masked columns of `entity` (never selected). */
  private masked(entity: CompiledEntity): readonly string[] {
    return this.policy === null ? [] : this.policy.read(entity).masked;
  }

  /** Live rows the caller's row policy lets it read, plus `extra` conditions. */
  private liveAndAllowed(entity: CompiledEntity, a: string, extra: string[]): string {
    const parts = [...extra];
    if (entity.softDelete) parts.push(`${a}."deletedAt" IS NULL`);
    const rows = this.policy?.rowsSql(entity, 'read', a, this.sql) ?? null;
    if (rows !== null) parts.push(rows);
    return parts.length === 0 ? 'TRUE' : parts.join(' AND ');
  }

  private planPage(entity: CompiledEntity, shape: PageShape): PlannedPage {
    const filter = shape.filter === null || shape.filter === undefined ? null : parseFilter(shape.filter, entity);
    if (this.policy !== null) {
      this.policy.guardFilter(entity, filter);
      this.policy.guardSort(entity, shape.sort);
    }
    if (shape.first !== null && shape.last !== null) throw validationFailed('Query.FirstAndLast', 'ask for first or last, not both', 'first');
    const asked = shape.last ?? shape.first;
    const size = asked ?? Math.min(50, this.maxPageSize);
    if (!Number.isInteger(size) || size < 0) throw validationFailed('Query.InvalidPageSize', 'first and last must be between 0 and the page size limit', shape.last !== null ? 'last' : 'first');
    if (size > this.maxPageSize) throw validationFailed('Query.PageSizeTooLarge', `first and last must be at most ${this.maxPageSize}`, shape.last !== null ? 'last' : 'first');
    const sort = shape.sort;
    // Same identity rule as REST cursors (list-params.ts): a cursor is only valid for the filter and sort it came from.
    const shapeKey = `${entity.entityName}|${filter === null ? '' : JSON.stringify(shape.filter)}|${sort.map((k) => (k.desc ? '-' : '') + k.field).join(',')}`;
    const cursorKeys = [...sort.map((k) => entity.queryableFields.get(k.field)!), entity.queryableFields.get('id')!];
    const decode = (text: string | null, field: string): unknown[] | null => {
      if (text === null) return null;
      try {
        return decodeCursor(text, shapeKey, cursorKeys).values;
      } catch (err) {
        // Same reason codes as REST; the field is the GraphQL argument.
        (err as { details?: { field?: string } }).details!.field = field;
        throw err;
      }
    };
    const backward = shape.last !== null;
    return {
      entity, shape, filter, backward, size, shapeKey,
      keys: (a) => keysetKeys(entity, backward ? flip(sort) : sort, a),
      after: decode(shape.after, 'after'),
      before: decode(shape.before, 'before'),
    };
  }

  /**
   * JSON of one page: `{ r: [row…] (size + 1 at most, to see past the end), c: count }`.
   * `outer(a)` ties the page to its parent row (a toMany relation's foreign key).
   */
  private pageJson(p: PlannedPage, outer: (a: string) => string[]): string {
    const a = this.alias();
    const conds = outer(a);
    const filter = p.filter === null ? null : filterToSql(p.filter, p.entity.entityName, a, this.policy === null ? filterTarget(p.entity) : this.policy.target(p.entity), this.sql);
    if (filter !== null) conds.push(filter);
    const keys = p.keys(a);
    const forward = p.backward ? keys.map((k) => ({ ...k, desc: !k.desc })) : keys;
    if (p.after !== null) conds.push(keysetAfterSql(forward, p.after, this.sql));
    if (p.before !== null) conds.push(keysetAfterSql(forward.map((k) => ({ ...k, desc: !k.desc })), p.before, this.sql));
    const order = keys.map((k) => `${k.col} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
    // Rows are read even when only counts are asked: page info needs to know whether one more exists.
    const row = this.rowJson(p.entity, p.shape.row ?? { columns: new Map(), toOne: new Map(), toMany: new Map() }, a, p.shape.cursors ? keys : null);
    const where = this.liveAndAllowed(p.entity, a, conds);
    const parts = [`'r', (SELECT coalesce(json_agg(s.o), '[]'::json) FROM (SELECT ${row} AS o FROM ${p.entity.table} ${a} WHERE ${where} ORDER BY ${order} LIMIT ${p.size + 1}) s)`];
    if (p.shape.totalCount) {
      // The count ignores the window (after/before): it is the number of rows the filter matches.
      const c = this.alias();
      const cconds = outer(c);
      if (p.filter !== null) cconds.push(filterToSql(p.filter, p.entity.entityName, c, this.policy === null ? filterTarget(p.entity) : this.policy.target(p.entity), this.sql));
      parts.push(`'c', (SELECT count(*)::int FROM ${p.entity.table} ${c} WHERE ${this.liveAndAllowed(p.entity, c, cconds)})`);
    }
    return `json_build_object(${parts.join(', ')})`;
  }

  /** JSON of one row of `entity` under alias `a`: its columns, toOne rows and toMany pages by response key. */
  private rowJson(entity: CompiledEntity, shape: RowShape, a: string, keys: KeysetKey[] | null): string {
    const hidden = this.masked(entity);
    const pairs: Array<[string, string]> = [];
    for (const [key, col] of shape.columns) {
      if (hidden.includes(col)) continue;
      const f = entity.queryableFields.get(col);
      // numeric as text: a JSON number would lose digits REST keeps.
      pairs.push([key, `${a}.${quoteIdent(col)}${f?.type === 'Decimal' ? '::text' : ''}`]);
    }
    for (const [key, { relation, row }] of shape.toOne) {
      // A reference masked from the caller is not followed (REST include does the same).
      if (hidden.includes(relation.field)) continue;
      const target = entity.peer(relation.target);
      const b = this.alias();
      const where = this.liveAndAllowed(target, b, [`${b}.id = ${a}.${quoteIdent(relation.field)}`]);
      pairs.push([key, `(SELECT ${this.rowJson(target, row, b, null)} FROM ${target.table} ${b} WHERE ${where})`]);
    }
    for (const [key, { relation, page }] of shape.toMany) {
      const owner = entity.peer(relation.owner);
      // Grouping by a reference the caller may not read would reveal it: not followed.
      if (this.masked(owner).includes(relation.field)) continue;
      const planned = this.planPage(owner, page);
      this.planned.set(page, planned);
      pairs.push([key, this.pageJson(planned, (b) => [`${b}.${quoteIdent(relation.field)} = ${a}.id`])]);
    }
    if (keys !== null) {
      pairs.push([KEY, `json_build_array(${keys.map((k) => (k.field?.type === 'Decimal' ? `${k.col}::text` : k.col)).join(', ')})`]);
    }
    if (pairs.length === 0) return `'{}'::json`;
    if (pairs.length <= MAX_BUILD_PAIRS) return `json_build_object(${pairs.map(([k, v]) => `'${k.replace(/'/g, "''")}', ${v}`).join(', ')})`;
    return `(SELECT row_to_json(x) FROM (SELECT ${pairs.map(([k, v]) => `${v} AS ${quoteIdent(k)}`).join(', ')}) x)`;
  }

  private finishPage(p: PlannedPage, json: unknown): PageResult {
    const page = json as { r?: Record<string, unknown>[]; c?: number };
    const raw = page.r ?? [];
    const more = raw.length > p.size;
    if (more) raw.pop();
    if (p.backward) raw.reverse();
    let cursors: string[] | null = null;
    if (p.shape.cursors) {
      const keys = p.keys('');
      cursors = raw.map((r) => encodeCursor(p.shapeKey, (r[KEY] as unknown[]).map((v, i) => (isTime(keys[i]!.field?.type) ? isoValue(v) : v)), 1));
    }
    const rowShape = p.shape.row;
    const rows = raw.map((r) => (rowShape === null ? {} : this.finishRow(p.entity, rowShape, r)));
    return {
      rows, cursors,
      hasNextPage: p.backward ? p.before !== null : more,
      hasPreviousPage: p.backward ? more : p.after !== null,
      totalCount: p.shape.totalCount ? page.c ?? 0 : null,
    };
  }

  private finishRow(entity: CompiledEntity, shape: RowShape, json: Record<string, unknown>): ShapedRow {
    const row: ShapedRow = json;
    delete row[KEY];
    const hidden = this.masked(entity);
    let masked: Set<string> | null = null;
    for (const [key, col] of shape.columns) {
      if (hidden.includes(col)) (masked ??= new Set()).add(key);
      else if (isTime(entity.queryableFields.get(col)?.type)) row[key] = isoValue(row[key]);
    }
    for (const [key, { relation, row: sub }] of shape.toOne) {
      if (hidden.includes(relation.field)) {
        (masked ??= new Set()).add(key);
        continue;
      }
      const v = row[key];
      row[key] = v === null || v === undefined ? null : this.finishRow(entity.peer(relation.target), sub, v as Record<string, unknown>);
    }
    for (const [key, { relation, page }] of shape.toMany) {
      const owner = entity.peer(relation.owner);
      if (this.masked(owner).includes(relation.field)) {
        (masked ??= new Set()).add(key);
        continue;
      }
      row[key] = this.finishPage(this.planned.get(page)!, row[key]);
    }
    if (masked !== null) row[MASKED] = masked;
    return row;
  }
}

/**
 * JSON renders a timestamptz as `2026-11-22T05:56:51.123456+00:00` (sessions
 * run in UTC); REST's text form is `…51.123456Z`. Same digits, REST's suffix.
 */
const isTime = (type: string | undefined): boolean => type === 'DateTime' || type === 'Instant';

function isoValue(v: unknown): unknown {
  return typeof v === 'string' && v.length >= 25 && v.endsWith('+00:00') && v.charCodeAt(10) === 84 /* T */ ? `${v.slice(0, -6)}Z` : v;
}
