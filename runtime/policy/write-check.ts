import { sqlstateOf } from '../../storage/index.js';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { SqlParams } from '../filter/to-sql.js';
import type { OperationContext } from '../operations/types.js';
import { deniedByPolicy } from './grant-policy.js';

const MARK = 'plinth_policy_check_failed';

/**
 * The final SELECT of a write statement (`WITH w AS (INSERT|UPDATE …
 * RETURNING …), ob AS (outbox) SELECT …`). Under a check, a written row
 * that fails it makes the statement raise (a cast that cannot succeed,
 * reached only through CASE, and depending on the row so the planner never
 * folds it): the write, its outbox row and anything else in the statement
 * are undone together, inside or outside a transaction. `updateRow` and
 * `insertStatement` turn that failure into 403 `Access.DeniedByPolicy`.
 */
export function checkedSelect(ctx: OperationContext, entity: CompiledEntity, verb: 'insert' | 'update', params: SqlParams): string {
  const policy = ctx.rowPolicy;
  const check = policy === null ? null : policy.verb(entity, verb).checkSql(policy.actor, 'w', params);
  if (check === null) return 'SELECT * FROM w';
  return `SELECT w.*, CASE WHEN (${check}) IS TRUE THEN 0 ELSE CAST(('${MARK}:' || w.id::text) AS integer) END AS "check__" FROM w`;
}

/** A statement undone because a written row failed the caller's check → 403; anything else unchanged. */
export function policyCheckFailure(entity: CompiledEntity, err: unknown): unknown {
  if (sqlstateOf(err) === '22P02' && err instanceof Error && err.message.includes(MARK)) {
    return deniedByPolicy(`the written ${entity.entityName} does not satisfy the grant's check; nothing was written`);
  }
  return err;
}

/** Rows as the caller may see them: the check column dropped, masked fields removed. */
export function answerRows(ctx: OperationContext, entity: CompiledEntity, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const policy = ctx.rowPolicy;
  if (policy === null) return rows;
  const masked = policy.read(entity).masked;
  for (const r of rows) {
    delete r.check__;
    for (const f of masked) delete r[f];
  }
  return rows;
}
