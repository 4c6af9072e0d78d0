import { accessDenied, validationFailed } from '../../errors/service-error.js';
import { expandIncludes, includeGrants, parseInclude } from '../../entities/include.js';
import { validateInput } from '../../entities/input.js';
import { outboxCte } from '../../entities/outbox-cte.js';
import { parseFieldsParam, project } from '../../entities/row-output.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import { SqlParams } from '../../filter/to-sql.js';
import { deniedByPolicy } from '../../policy/grant-policy.js';
import { noContent, single } from '../envelopes.js';
import type { OperationContext, Result } from '../types.js';
import { checkIdempotencyKey, runIdempotent } from './idempotency.js';
import { createRow } from './create-combiner.js';
import { insertRows, updateRow } from './insert.js';
import { etagOf, explainMissedWrite, parseIfMatch, requireRowId, rowNotFound } from './row-lookup.js';
import { runShapedRead, shapedReadGrants } from './shaped-read.js';
import { entitySpec } from './spec.js';
import { argsOf } from './args.js';

const withEtag = (ctx: OperationContext, row: Record<string, unknown>, status = 200): Result => single(ctx, row, status, { ETag: etagOf(row) });

export const createOp = entitySpec('Create', async (ctx) => {
  const entity = ctx.entity!;
  const input = validateInput(entity, ctx.inv.body, 'create');
  const key = ctx.inv.idempotencyKey;
  const result = key === null
    ? single(ctx, await createRow(ctx.services.db, ctx, entity, input), 201)
    : await runIdempotent(ctx, checkIdempotencyKey(key), async (db) => single(ctx, (await insertRows(db, ctx, entity, [input]))[0], 201));
  ctx.services.outbox.kick();
  const row = (result.body as { data?: Record<string, unknown> }).data;
  return row === undefined ? result : { ...result, headers: { ...result.headers, ETag: etagOf(row) } };
});

export const readOp = entitySpec(
  'Read',
  async (ctx) => {
    const entity = ctx.entity!;
    const read = ctx.inv.read;
    if (read !== undefined && 'row' in read) return runShapedRead(ctx, entity, read.row);
    const id = requireRowId(entity, ctx.inv.params.id);
    const args = argsOf(ctx);
    const fields = parseFieldsParam(entity, args.fields);
    const include = parseInclude(entity, args.include);
    const db = ctx.services.db;
    const policy = ctx.rowPolicy;
    const row = policy === null
      ? (await db.query<Record<string, unknown>>(entity.readById.sql, [id], entity.readById.name)).rows[0]
      : await readCovered(ctx, id);
    if (row === undefined) throw rowNotFound(entity);
    const etag = etagOf(row);
    if (include.length > 0) await expandIncludes(db, entity, [row], include, policy);
    return single(ctx, project(row, fields, include.map((r) => r.name)), 200, { ETag: etag });
  },
  (ctx) => (ctx.inv.read !== undefined ? shapedReadGrants(ctx) : includeGrants(ctx.entity!, argsOf(ctx).include)),
);

/**
 * Read by id under a row policy: the masked projection of the row if a
 * grant covers it (one named statement, prepared once per caller shape);
 * an uncovered row → 403 `Access.DeniedByPolicy`, without its values.
 */
async function readCovered(ctx: OperationContext, id: string): Promise<Record<string, unknown> | undefined> {
  const entity = ctx.entity!;
  const point = ctx.rowPolicy!.read(entity).pointRead(ctx.actor);
  const db = ctx.services.db;
  const row = (await db.query<Record<string, unknown>>(point.sql, point.values.length === 0 ? [id] : [id, ...point.values], point.name)).rows[0];
  if (row !== undefined || !point.limited) return row;
  // A miss under a row filter: 403 when the row exists but no grant covers it, else 404.
  const exists = await db.query(`SELECT 1 FROM ${entity.table} t WHERE t.id = $1${entity.liveClause}`, [id]);
  if (exists.rows.length > 0) throw deniedByPolicy(`no grant covers this ${entity.entityName}`);
  return undefined;
}

async function writeOne(ctx: OperationContext, mode: 'update' | 'replace'): Promise<Result> {
  const entity = ctx.entity!;
  const id = requireRowId(entity, ctx.inv.params.id);
  const input = validateInput(entity, ctx.inv.body, mode);
  const token = parseIfMatch(ctx.inv.ifMatch);
  const db = ctx.services.db;
  const row = await updateRow(db, ctx, entity, id, input, token === '*' ? null : token);
  if (row === null) throw await explainMissedWrite(db, entity, id, ctx.rowPolicy);
  ctx.services.outbox.kick();
  return withEtag(ctx, row);
}

export const updateOp = entitySpec('Update', (ctx) => writeOne(ctx, 'update'));
export const replaceOp = entitySpec('Replace', (ctx) => writeOne(ctx, 'replace'));

/** `force` as a boolean query flag; hard-deleting a soft-delete entity is an admin action. */
export function forceFlag(ctx: OperationContext): boolean {
  const v = argsOf(ctx).force;
  if (v === undefined || v === 'false' || v === '') return false;
  if (v !== 'true') throw validationFailed('Query.InvalidForce', 'force must be true or false', 'force');
  if (ctx.entity!.softDelete && ctx.actor.kind !== 'admin') {
    throw accessDenied('Access.ForceDeleteRequiresAdmin', 'force delete needs the admin credential');
  }
  return true;
}

/** SQL that deletes (hard, or soft for soft-delete entities) the rows chosen by `where` and writes their outbox rows. */
export function deleteSql(ctx: OperationContext, force: boolean, params: SqlParams, where: string): string {
  const entity = ctx.entity!;
  const hard = force || !entity.softDelete;
  const rows = ctx.rowPolicy?.rowsSql(entity, 'delete', 't', params) ?? null;
  if (rows !== null) where = `${where} AND ${rows}`;
  const write = hard
    ? `DELETE FROM ${entity.table} AS t WHERE ${where} RETURNING t.id`
    : `UPDATE ${entity.table} AS t SET "deletedAt" = now(), "updatedAt" = now(), "concurrencyToken" = gen_random_uuid() WHERE ${where} AND t."deletedAt" IS NULL RETURNING t.id`;
  return `WITH w AS (${write}), ${outboxCte(ctx, params, 'deleted', [])} SELECT id FROM w`;
}

export const deleteOp = entitySpec('Delete', async (ctx) => {
  const entity = ctx.entity!;
  const id = requireRowId(entity, ctx.inv.params.id);
  const force = forceFlag(ctx);
  const params = new SqlParams();
  const text = deleteSql(ctx, force, params, `t.id = ${params.add(id)}::uuid`);
  let deleted: number;
  try {
    deleted = (await ctx.services.db.query(text, params.values)).rows.length;
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'delete');
  }
  if (deleted === 0) throw ctx.rowPolicy === null ? rowNotFound(entity) : await explainMissedWrite(ctx.services.db, entity, id, ctx.rowPolicy, 'delete');
  ctx.services.outbox.kick();
  return noContent;
});

