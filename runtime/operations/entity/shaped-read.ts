import type { CompiledEntity } from '../../entities/compiled-entity.js';
import { maxPageSizeFor } from '../../entities/list-params.js';
import { ShapePlanner } from '../../entities/shape-sql.js';
import { statementName } from '../../entities/statement-names.js';
import { shapeGrants, type PageShape, type RowShape } from '../../entities/shape.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import { isUuid } from '../../entities/field-values.js';
import type { OperationContext, Result } from '../types.js';

/**
 * List and Read for protocols that select fields (Invocation.read): the
 * whole shape, nested relations and counts included, is one SQL statement
 * (entities/shape-sql.ts). The answer's `data` is a PageResult or a
 * ShapedRow (null when the row is missing or hidden from the caller).
 */
export async function runShapedList(ctx: OperationContext, entity: CompiledEntity, page: PageShape): Promise<Result> {
  const planner = new ShapePlanner(ctx.rowPolicy, maxPageSizeFor(ctx));
  const st = planner.pageStatement(entity, page);
  traceShapedRead(ctx, entity, page.filter);
  try {
    const res = await ctx.services.db.query<{ page: unknown }>(st.text, st.values, statementName(entity, st.text), ctx.inv.signal);
    return { status: 200, body: { data: st.finish(res.rows[0]!.page) } };
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}

export async function runShapedRead(ctx: OperationContext, entity: CompiledEntity, row: RowShape): Promise<Result> {
  const id = ctx.inv.params.id;
  // Not a UUID: names no row, like a missing one.
  if (id === undefined || !isUuid(id)) return { status: 200, body: { data: null } };
  const planner = new ShapePlanner(ctx.rowPolicy, maxPageSizeFor(ctx));
  const st = planner.rowStatement(entity, row, id.toLowerCase());
  traceShapedRead(ctx, entity, null);
  try {
    const res = await ctx.services.db.query<{ row: unknown }>(st.text, st.values, statementName(entity, st.text), ctx.inv.signal);
    const found = res.rows[0];
    return { status: 200, body: { data: found === undefined ? null : st.finish(found.row) } };
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'write');
  }
}

/** The decision trace of a read under a row policy: the evaluated filter and the caller's masks. */
function traceShapedRead(ctx: OperationContext, entity: CompiledEntity, requested: unknown): void {
  const policy = ctx.rowPolicy;
  if (policy === null) return;
  const read = policy.read(entity);
  ctx.trace.fieldMasks = read.masked;
  const rows = read.evaluatedRows(policy.actor);
  const asked = requested === undefined ? null : requested;
  ctx.trace.evaluatedFilter = asked === null ? rows : rows === null ? asked : { and: [asked, rows] };
}

/** Read grants of a shaped read beyond the operation's own. */
export function shapedReadGrants(ctx: OperationContext): string[] {
  const read = ctx.inv.read!;
  return 'page' in read ? shapeGrants(ctx.entity!, null, read.page) : shapeGrants(ctx.entity!, read.row);
}
