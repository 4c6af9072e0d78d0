import { expandIncludes } from '../../entities/include.js';
import { countQuery, listQuery, nextCursor } from '../../entities/list.js';
import { statementName } from '../../entities/statement-names.js';
import { listGrants, maxPageSizeFor, parseListParams, type ListParams } from '../../entities/list-params.js';
import { project } from '../../entities/row-output.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import type { SqlParams } from '../../filter/to-sql.js';
import { list, single, type Page } from '../envelopes.js';
import type { OperationContext, Result } from '../types.js';
import { runShapedList, shapedReadGrants } from './shaped-read.js';
import { entitySpec } from './spec.js';
import { NO_ARGS } from '../../entities/entity-args.js';
import { argsOf } from './args.js';

/**
 * Runs one page of a list over `entity`, optionally narrowed by `extra`
 * conditions (relation routes). Count runs beside the page when asked.
 */
export async function runList(ctx: OperationContext, entity: CompiledEntity, params: ListParams, extra?: (sql: SqlParams) => string[]): Promise<Result> {
  const db = ctx.services.db;
  const policy = ctx.rowPolicy;
  if (policy !== null) guardListQuery(ctx, entity, params);
  const q = listQuery(entity, params, extra, policy);
  const c = params.includeTotal ? countQuery(entity, params, extra, policy) : null;
  try {
    const [res, total] = await Promise.all([
      db.query<Record<string, unknown>>(q.text, q.values, q.reusable ? statementName(entity, q.text) : undefined),
      c === null ? Promise.resolve(null) : db.query<{ n: number }>(c.text, c.values, statementName(entity, c.text)),
    ]);
    const rows = res.rows;
    const more = rows.length > params.pageSize;
    if (more) rows.pop();
    if (params.include.length > 0) await expandIncludes(db, entity, rows, params.include, policy);
    const page: Page = { number: params.page, size: params.pageSize };
    if (total !== null) page.totalCount = total.rows[0]!.n;
    if (more) page.next = nextCursor(params, rows[rows.length - 1]!);
    const keep = params.include.map((r) => r.name);
    return list(ctx, params.fields === null ? rows : rows.map((r) => project(r, params.fields, keep)), page);
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}

/**
 * Under a row policy: a filter or sort on a masked field is refused (403),
 * and the decision trace records the evaluated filter (the request filter
 * ANDed with the caller's row filter, `$actor` substituted) and the masks.
 */
function guardListQuery(ctx: OperationContext, entity: CompiledEntity, params: ListParams): void {
  const policy = ctx.rowPolicy!;
  policy.guardFilter(entity, params.filter);
  policy.guardSort(entity, params.sort);
  const read = policy.read(entity);
  ctx.trace.fieldMasks = read.masked;
  const rows = read.evaluatedRows(policy.actor);
  const text = argsOf(ctx).filter;
  const requested = text === undefined || text === '' ? null : (JSON.parse(text) as unknown);
  ctx.trace.evaluatedFilter = requested === null ? rows : rows === null ? requested : { and: [requested, rows] };
}

export const listOp = entitySpec(
  'List',
  (ctx) => {
    const read = ctx.inv.read;
    if (read !== undefined && 'page' in read) return runShapedList(ctx, ctx.entity!, read.page);
    return runList(ctx, ctx.entity!, parseListParams(ctx.entity!, argsOf(ctx), maxPageSizeFor(ctx)));
  },
  (ctx) => (ctx.inv.read !== undefined ? shapedReadGrants(ctx) : listGrants(ctx.entity!, argsOf(ctx))),
);

export const countOp = entitySpec('Count', async (ctx) => {
  const entity = ctx.entity!;
  const filter = argsOf(ctx).filter;
  const params = parseListParams(entity, filter === undefined ? NO_ARGS : { filter }, ctx.services.limits.maxPageSize);
  if (ctx.rowPolicy !== null) guardListQuery(ctx, entity, params);
  const q = countQuery(entity, params, undefined, ctx.rowPolicy);
  try {
    const res = await ctx.services.db.query<{ n: number }>(q.text, q.values);
    return single(ctx, { count: res.rows[0]!.n });
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}, (ctx) => listGrants(ctx.entity!, argsOf(ctx), true));
