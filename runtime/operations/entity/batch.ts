import { ServiceError, validationFailed } from '../../errors/service-error.js';
import { validateInput, type RowValues } from '../../entities/input.js';
import { isUuid } from '../../entities/field-values.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import { SqlParams } from '../../filter/to-sql.js';
import { single } from '../envelopes.js';
import type { OperationContext } from '../types.js';
import { deleteSql, forceFlag } from './crud.js';
import { insertRowsAtomically, updateRow } from './insert.js';
import { explainMissedWrite } from './row-lookup.js';
import { deniedByPolicy } from '../../policy/grant-policy.js';
import type { SqlExecutor } from '../../../storage/index.js';
import { entitySpec } from './spec.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The array under `key`, size-checked before any row is looked at or a transaction opens. */
function batchArray(ctx: OperationContext, key: 'items' | 'ids'): unknown[] {
  const body = ctx.inv.body;
  if (!isObject(body) || !Array.isArray(body[key])) throw validationFailed('Batch.InvalidBody', `body must be { "${key}": [ … ] }`, key);
  for (const k of Object.keys(body)) if (k !== key) throw validationFailed('Batch.UnknownProperty', `unknown property '${k}'`, k);
  const items = body[key] as unknown[];
  if (items.length === 0) throw validationFailed('Batch.Empty', `${key} must not be empty`, key);
  const max = ctx.services.limits.maxBatchRows;
  if (items.length > max) throw validationFailed('Batch.TooLarge', `at most ${max} rows per batch`, key);
  return items;
}

/** Validates every item first, so one bad row fails the batch before any write. */
function validateAll(ctx: OperationContext, items: unknown[], mode: 'create' | 'update'): RowValues[] {
  return items.map((item, i) => {
    try {
      return validateInput(ctx.entity!, item, mode, mode === 'update' ? ['id'] : []);
    } catch (err) {
      if (ServiceError.is(err)) {
        throw new ServiceError(err.code, err.reasonCode, `items[${i}]: ${err.message}`, { ...err.details, field: `items[${i}]${err.details.field === undefined ? '' : `.${err.details.field}`}` });
      }
      throw err;
    }
  });
}

export const batchCreateOp = entitySpec('BatchCreate', async (ctx) => {
  const rows = validateAll(ctx, batchArray(ctx, 'items'), 'create');
  const created = await insertRowsAtomically(ctx.services.db, ctx, ctx.entity!, rows);
  ctx.services.outbox.kick();
  return single(ctx, created, 201);
});

export const batchUpdateOp = entitySpec('BatchUpdate', async (ctx) => {
  const entity = ctx.entity!;
  const items = batchArray(ctx, 'items');
  const inputs = validateAll(ctx, items, 'update');
  const ids = items.map((item, i) => {
    const id = (item as Record<string, unknown>).id;
    if (!isUuid(id)) throw validationFailed(`${entity.entityName}Validation.InvalidId`, `items[${i}].id must be a row id`, `items[${i}].id`);
    return id.toLowerCase();
  });
  if (new Set(ids).size !== ids.length) throw validationFailed('Batch.DuplicateId', 'each id may appear once per batch', 'items');
  const updated = await ctx.services.db.transaction(async (tx) => {
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < ids.length; i++) {
      const row = await updateRow(tx, ctx, entity, ids[i]!, inputs[i]!, null);
      if (row === null) throw await explainMissedWrite(tx, entity, ids[i]!, ctx.rowPolicy);
      out.push(row);
    }
    return out;
  });
  ctx.services.outbox.kick();
  return single(ctx, updated);
});

async function refuseUncovered(ctx: OperationContext, tx: SqlExecutor, ids: string[]): Promise<void> {
  const entity = ctx.entity!;
  const params = new SqlParams();
  params.add(ids);
  const rows = ctx.rowPolicy!.rowsSql(entity, 'delete', 't', params);
  if (rows === null) return;
  const res = await tx.query(`SELECT 1 FROM ${entity.table} t WHERE t.id = ANY($1::uuid[])${entity.liveClause} AND NOT ((${rows}) IS TRUE) LIMIT 1 FOR UPDATE`, params.values);
  if (res.rows.length > 0) throw deniedByPolicy(`no delete grant covers every listed ${entity.entityName}; nothing was deleted`);
}

/** Deletes the listed rows in one statement; ids that match no live row are skipped and not counted. */
export const batchDeleteOp = entitySpec('BatchDelete', async (ctx) => {
  const entity = ctx.entity!;
  const ids = batchArray(ctx, 'ids');
  ids.forEach((id, i) => {
    if (!isUuid(id)) throw validationFailed(`${entity.entityName}Validation.InvalidId`, `ids[${i}] must be a row id`, `ids[${i}]`);
  });
  const force = forceFlag(ctx);
  const params = new SqlParams();
  const text = deleteSql(ctx, force, params, `t.id = ANY(${params.add(ids)}::uuid[])`);
  let deleted: number;
  try {
    deleted = ctx.rowPolicy === null
      ? (await ctx.services.db.query(text, params.values)).rows.length
      : await ctx.services.db.transaction(async (tx) => {
        // Under a row policy a listed live row no delete grant covers refuses the whole batch (403), nothing deleted.
        await refuseUncovered(ctx, tx, ids as string[]);
        return (await tx.query(text, params.values)).rows.length;
      });
  } catch (err) {
    throw mapEntitySqlError(entity, err, 'delete');
  }
  if (deleted > 0) ctx.services.outbox.kick();
  return single(ctx, { deleted });
});
