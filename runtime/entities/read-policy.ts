import type { SqlFilterTarget, SqlParams } from '../filter/to-sql.js';
import type { CompiledEntity } from './compiled-entity.js';

/**
 * What reading rows needs of the caller's row policy: the rows it may see,
 * the columns it may read, the fields a filter may reach. The policy layer
 * (runtime/policy/row-policy.ts) implements it on top of these readers, so
 * they name only this.
 */
export interface ReadPolicy {
  read(entity: CompiledEntity): { readonly masked: readonly string[]; readonly selectList: string };
  /** The SQL condition on the rows the caller may read (alias `alias`), or null when every row is readable. */
  rowsSql(entity: CompiledEntity, verb: 'read', alias: string, params: SqlParams): string | null;
  target(entity: CompiledEntity): SqlFilterTarget;
}
