import type { SqlExecutor } from '../../../storage/index.js';
import { ServiceError, notFound } from '../../errors/service-error.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import { isUuid } from '../../entities/field-values.js';
import { SqlParams } from '../../filter/to-sql.js';
import { deniedByPolicy } from '../../policy/grant-policy.js';
import type { PolicyVerb } from '../../policy/compiled-policy.js';
import type { RowPolicy } from '../../policy/row-policy.js';

export const rowNotFound = (entity: CompiledEntity): ServiceError => notFound(`${entity.entityName}.NotFound`, `${entity.entityName} not found`);

/** A path id that is not a UUID names no row: 404, never a database error. */
export function requireRowId(entity: CompiledEntity, id: string | undefined): string {
  if (id === undefined || !isUuid(id)) throw rowNotFound(entity);
  return id.toLowerCase();
}

/** `If-Match` value → token; accepts quoted ETags and `*` (any). Null when absent. */
export function parseIfMatch(header: string | null): string | '*' | null {
  if (header === null || header === '') return null;
  const v = header.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
  return v;
}

/**
 * After a conditional write matched no row: 404 when the row is gone,
 * else 409 because the concurrency token did not match.
 */
export async function explainMissedWrite(db: SqlExecutor, entity: CompiledEntity, id: string, policy: RowPolicy | null = null, verb: PolicyVerb = 'update'): Promise<ServiceError> {
  const params = new SqlParams();
  params.add(id);
  const rows = policy?.rowsSql(entity, verb, 't', params) ?? null;
  const res = await db.query<{ covered: boolean }>(`SELECT ${rows === null ? 'TRUE' : `(${rows}) IS TRUE`} AS covered FROM ${entity.table} t WHERE t.id = $1${entity.liveClause}`, params.values);
  if (res.rows.length === 0) return rowNotFound(entity);
  // A row the caller's grants do not cover: refused without saying more about it.
  if (res.rows[0]!.covered !== true) return deniedByPolicy(`no ${verb} grant covers this ${entity.entityName}; nothing was written`);
  return new ServiceError('CONFLICT', `${entity.entityName}Validation.ConcurrencyTokenMismatch`, 'If-Match does not match the current concurrencyToken; re-read and retry', { field: 'If-Match' });
}

export const etagOf = (row: Record<string, unknown>): string => `"${String(row.concurrencyToken)}"`;
