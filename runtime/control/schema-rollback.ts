import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { ServiceError, conflict, notFound } from '../errors/service-error.js';
import { EMPTY_MODEL, findEntity, type EntityDef, type ProjectModel } from '../publication/model.js';
import { readHead } from './schema-change.js';
import { canonicalJson } from './schema-diff.js';
import { planOne, type ChangeInput } from './schema-migration.js';
import { handlerChangesBetween } from '../authored/handler-plan.js';

const S = PLATFORM_SCHEMA;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The definition body a create/alter takes back (the model's own shape is a valid body). */
export const bodyOf = (e: EntityDef): Record<string, unknown> => ({
  entityName: e.entityName,
  fields: e.fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable, unique: f.unique, default: f.default, references: f.references, ...(f.type === 'Enum' ? { values: f.values } : {}) })),
  softDelete: e.softDelete,
});

/** A branch's model at a publication version (0: empty); undefined when the branch has no such version. */
export async function modelAt(db: SqlExecutor, projectId: string, branch: string, version: number): Promise<ProjectModel | undefined> {
  if (version === 0) return EMPTY_MODEL;
  const res = await db.query<{ model: ProjectModel }>(`SELECT model FROM ${S}.publications WHERE project_id = $1 AND branch = $2 AND version = $3`, [projectId, branch, version]);
  return res.rows[0]?.model;
}

/**
 * The changes that bring `from` back to `to` (entities and handlers), in an order each applies in.
 */
export function changesBetween(from: ProjectModel, to: ProjectModel, schema: string): ChangeInput[] {
  const pending: ChangeInput[] = [];
  for (const e of from.entities) if (findEntity(to, e.entityName) === undefined) pending.push({ action: 'delete', body: { entityName: e.entityName } });
  for (const e of to.entities) {
    const now = findEntity(from, e.entityName);
    if (now === undefined) pending.push({ action: 'create', body: bodyOf(e) });
    else if (canonicalJson(now) !== canonicalJson(e)) pending.push({ action: 'alter', body: bodyOf(e) });
  }
  pending.push(...handlerChangesBetween(from, to));
  return orderChanges(from, schema, pending);
}

/**
 * Puts changes in an order each applies in on the model the previous ones leave
 * (a referenced entity created before its users, dropped after them): tried
 * round by round; when a round makes no progress the first error is the answer.
 */
export function orderChanges(model: ProjectModel, schema: string, changes: ChangeInput[]): ChangeInput[] {
  const pending = [...changes];
  const ordered: ChangeInput[] = [];
  let current = model;
  while (pending.length > 0) {
    let firstError: unknown = null;
    const before = pending.length;
    for (let i = 0; i < pending.length; ) {
      try {
        current = planOne(current, schema, pending[i]!).model;
        ordered.push(pending.splice(i, 1)[0]!);
      } catch (err) {
        if (!ServiceError.is(err)) throw err;
        firstError ??= err;
        i++;
      }
    }
    if (pending.length === before) throw firstError;
  }
  return ordered;
}

export interface RollbackPlan {
  changes: ChangeInput[];
  rollbackOf: { journalId: string; toVersion: number };
}

/** What a rollback to journal entry `journalId` applies: the branch back to the model before it. 404 for an unknown entry. */
export async function planRollback(db: SqlExecutor, projectId: string, branch: string, journalId: string): Promise<RollbackPlan> {
  if (!UUID.test(journalId)) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
  const res = await db.query<{ from_version: string; to_version: string; state: string }>(
    `SELECT from_version, to_version, state FROM ${S}.schema_journal WHERE project_id = $1 AND branch = $2 AND id = $3`,
    [projectId, branch, journalId],
  );
  const entry = res.rows[0];
  if (entry === undefined) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
  if (entry.state !== 'applied') throw conflict('Schema.JournalEntryNotApplied', `the entry is ${entry.state}; only an applied entry can be rolled back`, 'journalId');
  const target = await modelAt(db, projectId, branch, Number(entry.from_version));
  if (target === undefined) throw notFound('Schema.PublicationNotFound', 'the publication before this entry no longer exists');
  const head = await readHead(db, projectId, branch, false);
  const changes = changesBetween(head.model, target, head.schema);
  if (changes.length === 0) throw conflict('Schema.NothingToRollBack', 'the branch already has the shape it had before this entry', 'journalId');
  return { changes, rollbackOf: { journalId, toVersion: Number(entry.to_version) } };
}
