import type { SqlExecutor } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';
import { grantFor } from '../publication/operations.js';
import type { Relation } from '../publication/relations.js';
import type { CompiledEntity } from './compiled-entity.js';
import { SqlParams } from '../filter/to-sql.js';
import type { ReadPolicy } from './read-policy.js';

const MAX_INCLUDES = 10;
/** Rows per parent for a toMany include; larger sets are read through the relation route. */
export const MAX_INCLUDED_CHILDREN = 100;

/** Parses `include` csv into relations of the entity (422 on unknown ones). */
export function parseInclude(entity: CompiledEntity, text: string | undefined): Relation[] {
  if (text === undefined || text === '') return [];
  const names = [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  if (names.length > MAX_INCLUDES) throw validationFailed('Query.TooManyIncludes', `at most ${MAX_INCLUDES} includes`, 'include');
  return names.map((n) => {
    const r = entity.relations.get(n);
    if (r === undefined) throw validationFailed('Query.UnknownRelation', `unknown relation '${n}' in include`, 'include');
    return r;
  });
}

/** Read grants an include needs (stage 4 adds them to the operation's own). */
export function includeGrants(entity: CompiledEntity, text: string | undefined): string[] {
  return parseInclude(entity, text).map((r) => grantFor(r.kind === 'toOne' ? r.target : r.owner, 'read'));
}

/**
 * Expands relations in place: a toOne field's id becomes the related row
 * (null when it is gone or hidden); a toMany relation adds an array. One
 * query per relation for the whole page, never one per row.
 */
export async function expandIncludes(db: SqlExecutor, entity: CompiledEntity, rows: Record<string, unknown>[], relations: readonly Relation[], policy: ReadPolicy | null = null): Promise<void> {
  if (rows.length === 0) return;
  // A relation whose reference field is masked from the caller is not expanded (the field stays absent).
  const hidden = policy === null ? [] : policy.read(entity).masked;
  for (const r of relations) {
    if (r.kind === 'toOne') {
      if (hidden.includes(r.field)) continue;
      const target = entity.peer(r.target);
      const ids = [...new Set(rows.map((row) => row[r.field]).filter((v): v is string => typeof v === 'string'))];
      const found = new Map<string, Record<string, unknown>>();
      if (ids.length > 0) {
        // The related entity's read policy applies: a row the caller may not read is left out (null below).
        const params = new SqlParams();
        params.add(ids);
        const allowed = policy?.rowsSql(target, 'read', 't', params) ?? null;
        const select = policy === null ? target.selectList : policy.read(target).selectList;
        const res = await db.query<Record<string, unknown>>(
          `SELECT ${select} FROM ${target.table} t WHERE t.id = ANY($1::uuid[])${target.liveClause}${allowed === null ? '' : ` AND ${allowed}`}`,
          params.values,
        );
        for (const row of res.rows) found.set(row.id as string, row);
      }
      for (const row of rows) {
        const v = row[r.field];
        row[r.name] = typeof v === 'string' ? found.get(v) ?? null : null;
      }
    } else {
      const owner = entity.peer(r.owner);
      // Grouping the owner's rows by their reference would reveal it when it is masked from the caller: not expanded (absent).
      if (policy !== null && policy.read(owner).masked.includes(r.field)) continue;
      const ids = rows.map((row) => row.id as string);
      const params = new SqlParams();
      params.add(ids);
      const allowed = policy?.rowsSql(owner, 'read', 't', params) ?? null;
      const select = policy === null ? owner.selectList : policy.read(owner).selectList;
      const res = await db.query<Record<string, unknown>>(
        `SELECT * FROM (SELECT ${select}, t."${r.field}" AS fk__, row_number() OVER (PARTITION BY t."${r.field}" ORDER BY t."createdAt", t.id) AS rn__ FROM ${owner.table} t WHERE t."${r.field}" = ANY($1::uuid[])${owner.liveClause}${allowed === null ? '' : ` AND ${allowed}`}) x WHERE rn__ <= ${MAX_INCLUDED_CHILDREN}`,
        params.values,
      );
      const byParent = new Map<string, Record<string, unknown>[]>();
      for (const row of res.rows) {
        delete row.rn__;
        const key = row.fk__ as string;
        delete row.fk__;
        const list = byParent.get(key);
        if (list === undefined) byParent.set(key, [row]);
        else list.push(row);
      }
      for (const row of rows) row[r.name] = byParent.get(row.id as string) ?? [];
    }
  }
}
