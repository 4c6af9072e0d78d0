import { quoteIdent, type SqlExecutor } from '../../storage/index.js';
import { canonicalJson, fieldChanges } from '../control/schema-diff.js';
import type { EntityDef, FieldDef, ProjectModel } from '../publication/model.js';
import { qualifiedTable } from '../publication/sql-names.js';
import { handlerDiff, type HandlerAction } from '../authored/handler-plan.js';

/** One entry of a proposal's `diff` (CONTRACT "Proposals", "Handlers"), also the vocabulary of a deployment plan. */
export type DiffEntry =
  | { op: 'addEntity' | 'alterEntity' | 'dropEntity'; entityName: string; fields?: Array<{ op: 'addField' | 'dropField' | 'alterField'; field: string }> }
  | { op: HandlerAction; name: string };

export interface ValidationProblem {
  entityName: string;
  field?: string;
  reasonCode: string;
  message: string;
}

const byName = (m: ProjectModel): Map<string, EntityDef> => new Map(m.entities.map((e) => [e.entityName, e]));

/** One entry per entity that differs between `from` (base) and `to` (head), in entity-name order; then one per differing handler, in name order. */
export function modelDiff(from: ProjectModel, to: ProjectModel): DiffEntry[] {
  const a = byName(from);
  const b = byName(to);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  const out: DiffEntry[] = [];
  for (const n of names) {
    const before = a.get(n) ?? null;
    const after = b.get(n) ?? null;
    if (before === null) out.push({ op: 'addEntity', entityName: n, fields: fieldChanges(null, after) });
    else if (after === null) out.push({ op: 'dropEntity', entityName: n });
    else if (canonicalJson(before) !== canonicalJson(after)) out.push({ op: 'alterEntity', entityName: n, fields: fieldChanges(before, after) });
  }
  out.push(...handlerDiff(from, to));
  return out;
}

/**
 * Tries the diff against base's rows: a field that becomes required without a
 * default while rows lack it, a field that becomes unique over duplicates, an
 * enum that loses a value rows hold. Reads only; every check is one query.
 */
export async function validateAgainstRows(db: SqlExecutor, baseSchema: string, from: ProjectModel, to: ProjectModel, diff: DiffEntry[]): Promise<{ ok: boolean; problems: ValidationProblem[] }> {
  const a = byName(from);
  const b = byName(to);
  const problems: ValidationProblem[] = [];
  for (const d of diff) {
    if (d.op !== 'alterEntity') continue;
    const before = a.get(d.entityName)!;
    const after = b.get(d.entityName)!;
    const table = qualifiedTable(baseSchema, d.entityName);
    for (const f of after.fields) {
      const old = before.fields.find((x) => x.name === f.name) ?? null;
      const p = await fieldProblem(db, table, d.entityName, old, f);
      if (p !== null) problems.push(p);
    }
  }
  return { ok: problems.length === 0, problems };
}

async function any(db: SqlExecutor, sql: string, params: unknown[] = []): Promise<boolean> {
  return (await db.query(sql, params)).rows.length > 0;
}

async function fieldProblem(db: SqlExecutor, table: string, entityName: string, old: FieldDef | null, f: FieldDef): Promise<ValidationProblem | null> {
  const col = quoteIdent(f.name);
  const required = !f.nullable && f.default === null;
  if (required && (old === null || old.nullable)) {
    const where = old === null ? '' : ` WHERE ${col} IS NULL`;
    if (await any(db, `SELECT 1 FROM ${table}${where} LIMIT 1`)) {
      return { entityName, field: f.name, reasonCode: 'Proposal.NotNullViolation', message: `'${f.name}' becomes required but rows of '${entityName}' on base have no value` };
    }
  }
  if (old === null) return null;
  if (f.unique && !old.unique && await any(db, `SELECT 1 FROM ${table} WHERE ${col} IS NOT NULL GROUP BY ${col} HAVING count(*) > 1 LIMIT 1`)) {
    return { entityName, field: f.name, reasonCode: 'Proposal.UniqueViolation', message: `'${f.name}' becomes unique but rows of '${entityName}' on base share a value` };
  }
  if (f.type === 'Enum' && old.type === 'Enum' && old.values.some((v) => !f.values.includes(v))
    && await any(db, `SELECT 1 FROM ${table} WHERE ${col}::text <> ALL($1::text[]) LIMIT 1`, [f.values])) {
    return { entityName, field: f.name, reasonCode: 'Proposal.EnumViolation', message: `rows of '${entityName}' on base hold a value '${f.name}' no longer allows` };
  }
  return null;
}
