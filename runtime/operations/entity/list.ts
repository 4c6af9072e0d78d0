import { expandIncludes } from '../../entities/include.js';
import { countQuery, listQuery, nextCursor } from '../../entities/list.js';
import { listGrants, maxPageSizeFor, parseListParams, type ListParams } from '../../entities/list-params.js';
import { project } from '../../entities/row-output.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import type { SqlParams } from '../../filter/to-sql.js';
import { list, single, type Page } from '../envelopes.js';
import type { OperationContext, Result } from '../types.js';
import { entitySpec } from './spec.js';

/**
 * Runs one page of a list over `entity`, optionally narrowed by `extra`
 * conditions (relation routes). Count runs beside the page when asked.
 */
export async function runList(ctx: OperationContext, entity: CompiledEntity, params: ListParams, extra?: (sql: SqlParams) => string[]): Promise<Result> {
  const db = ctx.services.db;
  const q = listQuery(entity, params, extra);
  const c = params.includeTotal ? countQuery(entity, params, extra) : null;
  try {
    const [res, total] = await Promise.all([
      db.query<Record<string, unknown>>(q.text, q.values),
      c === null ? Promise.resolve(null) : db.query<{ n: number }>(c.text, c.values),
    ]);
    const rows = res.rows;
    const more = rows.length > params.pageSize;
    if (more) rows.pop();
    if (params.include.length > 0) await expandIncludes(db, entity, rows, params.include);
    const page: Page = { number: params.page, size: params.pageSize };
    if (total !== null) page.totalCount = total.rows[0]!.n;
    if (more) page.next = nextCursor(params, rows[rows.length - 1]!);
    const keep = params.include.map((r) => r.name);
    return list(ctx, params.fields === null ? rows : rows.map((r) => project(r, params.fields, keep)), page);
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}

export const listOp = entitySpec(
  'List',
  (ctx) => runList(ctx, ctx.entity!, parseListParams(ctx.entity!, ctx.inv.query, maxPageSizeFor(ctx))),
  (ctx) => listGrants(ctx.entity!, ctx.inv.query),
);

export const countOp = entitySpec('Count', async (ctx) => {
  const entity = ctx.entity!;
  const params = parseListParams(entity, new Map([...ctx.inv.query].filter(([k]) => k === 'filter')), ctx.services.limits.maxPageSize);
  const q = countQuery(entity, params);
  try {
    const res = await ctx.services.db.query<{ n: number }>(q.text, q.values);
    return single(ctx, { count: res.rows[0]!.n });
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}, (ctx) => listGrants(ctx.entity!, ctx.inv.query, true));
