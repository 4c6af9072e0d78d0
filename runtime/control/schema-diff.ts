import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { notFound } from '../errors/service-error.js';
import { EMPTY_MODEL, type EntityDef, type ProjectModel } from '../publication/model.js';
import { readHead } from './schema-change.js';

const S = PLATFORM_SCHEMA;
const DIGITS = /^[0-9]{1,15}$/;
const BRANCH_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * A diff endpoint (CONTRACT): digits are a publication version of the project
 * (0: the empty model before the first change), anything else a branch name
 * (its head). Unknown → 404. `ref` is what the answer echoes.
 */
export async function resolveModelRef(db: SqlExecutor, projectId: string, branch: string, text: string): Promise<{ ref: number | string; model: ProjectModel }> {
  if (DIGITS.test(text)) {
    const version = Number(text);
    if (version === 0) return { ref: 0, model: EMPTY_MODEL };
    // Versions are one counter per project (CONTRACT "Branches"); the scoped branch's own publication wins a tie.
    const res = await db.query<{ model: ProjectModel }>(
      `SELECT model FROM ${S}.publications WHERE project_id = $1 AND version = $2 ORDER BY (branch = $3) DESC LIMIT 1`,
      [projectId, version, branch],
    );
    if (res.rows[0] === undefined) throw notFound('Schema.PublicationNotFound', `publication version ${version} not found`);
    return { ref: version, model: res.rows[0].model };
  }
  if (!BRANCH_NAME.test(text)) throw notFound('Schema.BranchNotFound', `branch '${text}' not found`);
  try {
    return { ref: text, model: (await readHead(db, projectId, text, false)).model };
  } catch {
    throw notFound('Schema.BranchNotFound', `branch '${text}' not found`);
  }
}

/** JSON with sorted keys: a model read back from jsonb has its keys reordered. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Entity names added, removed and changed from `a` to `b`. */
export function diffModels(a: ProjectModel, b: ProjectModel): { added: string[]; removed: string[]; changed: string[] } {
  const names = (m: ProjectModel) => new Map(m.entities.map((e) => [e.entityName, canonicalJson(e)]));
  const before = names(a);
  const after = names(b);
  return {
    added: [...after.keys()].filter((n) => !before.has(n)),
    removed: [...before.keys()].filter((n) => !after.has(n)),
    changed: [...after.keys()].filter((n) => before.has(n) && before.get(n) !== after.get(n)),
  };
}

/** A preview's field changes (CONTRACT): `{ op: addField|dropField|alterField, field }`, no SQL. */
export function fieldChanges(before: EntityDef | null, after: EntityDef | null): Array<{ op: 'addField' | 'dropField' | 'alterField'; field: string }> {
  const old = new Map((before?.fields ?? []).map((f) => [f.name, canonicalJson(f)]));
  const next = new Map((after?.fields ?? []).map((f) => [f.name, canonicalJson(f)]));
  const out: Array<{ op: 'addField' | 'dropField' | 'alterField'; field: string }> = [];
  for (const name of old.keys()) if (!next.has(name)) out.push({ op: 'dropField', field: name });
  for (const [name, f] of next) {
    const o = old.get(name);
    if (o === undefined) out.push({ op: 'addField', field: name });
    else if (o !== f) out.push({ op: 'alterField', field: name });
  }
  return out;
}
