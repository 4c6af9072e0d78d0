import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { readHead, type SchemaAction } from '../../control/schema-change.js';
import type { MigrationKind, ChangeInput } from '../../control/schema-migration.js';
import { orderChanges } from '../../control/schema-rollback.js';
import { control } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import { MAX_MIGRATION_CHANGES, SCHEMA_JOURNAL_SCHEMAS as JS } from './schema-journal-schemas.js';
import { SCHEMA_REASONS, SCHEMA_TAG, STATE_ERRORS, schemaOp } from './schema-op.js';

const S = PLATFORM_SCHEMA;

const op = (id: string, contract: Parameters<typeof schemaOp>[2], execute: Parameters<typeof schemaOp>[3]): DeclaredSpec => schemaOp(SCHEMA_TAG, id, contract, execute);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface JournalRow {
  id: string;
  action: string;
  entity_name: string;
  definition: unknown;
  to_version: string;
  state: string;
  change: Record<string, unknown> | null;
  created_at: string | Date;
  settled_at: string | Date | null;
}

const JOURNAL_COLUMNS = 'id, action, entity_name, definition, to_version, state, change, created_at, settled_at';

/** CONTRACT's journal entry. Entries written before migration 20 have no `change`: it is rebuilt from their columns. */
export function journalEntry(r: JournalRow): Record<string, unknown> {
  const change = r.change ?? (r.definition === null ? { action: r.action, entityName: r.entity_name } : { action: r.action, entityName: r.entity_name, definition: r.definition });
  return { id: r.id, publicationVersion: Number(r.to_version), change, state: r.state, at: new Date(r.settled_at ?? r.created_at).toISOString() };
}

async function readEntry(ctx: OperationContext, id: string): Promise<Record<string, unknown>> {
  const scope = ctx.scope!;
  if (!UUID.test(id)) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
  const res = await ctx.services.db.query<JournalRow>(`SELECT ${JOURNAL_COLUMNS} FROM ${S}.schema_journal WHERE project_id = $1 AND branch = $2 AND id = $3`, [scope.project.id, scope.branch, id]);
  if (res.rows[0] === undefined) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
  return journalEntry(res.rows[0]);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The body's list under `key`. The schema refuses a missing, non-list or empty one on an object
 * body with the same 422; this also answers a body that is not an object (or none), and the length.
 */
function listOf(body: unknown, key: string): unknown[] {
  const v = isObject(body) ? body[key] : undefined;
  if (!Array.isArray(v) || v.length === 0) throw validationFailed('Schema.InvalidBody', `${key} must be a non-empty array`, key);
  if (v.length > MAX_MIGRATION_CHANGES) throw validationFailed('Schema.TooManyChanges', `${key} takes at most ${MAX_MIGRATION_CHANGES} entries`, key);
  return v;
}

/** `migrate/apply` changes: `{ action: "create"|"alter", definition }` or `{ action: "delete", entityName }`. */
function parseChanges(body: unknown): ChangeInput[] {
  return listOf(body, 'changes').map((c, i) => {
    const at = `changes[${i}]`;
    if (!isObject(c)) throw validationFailed('Schema.InvalidChange', 'a change must be an object', at);
    const action = c.action;
    if (action === 'create' || action === 'alter') {
      if (!isObject(c.definition)) throw validationFailed('Schema.InvalidChange', `${action} needs a definition object`, `${at}.definition`);
      return { action, body: c.definition };
    }
    if (action === 'delete') {
      if (typeof c.entityName !== 'string') throw validationFailed('Schema.InvalidEntityName', 'delete needs entityName', `${at}.entityName`);
      return { action, body: { entityName: c.entityName } };
    }
    throw validationFailed('Schema.InvalidChange', 'action must be create, alter or delete', `${at}.action`);
  });
}

async function migrate(ctx: OperationContext, kind: MigrationKind, changes: ChangeInput[]) {
  const scope = ctx.scope!;
  const res = await ctx.services.control.schemaCommand(scope.project.id, {
    kind: 'migrate',
    migration: { branch: scope.branch, kind, changes, actor: ctx.actor.label, correlationId: ctx.inv.correlationId },
  });
  if (res.kind !== 'migrated') throw new Error('unexpected schema command result');
  return res.result;
}

/** Batch bodies in an order that applies (referenced entities first on create, last on delete). */
async function ordered(ctx: OperationContext, changes: ChangeInput[]): Promise<ChangeInput[]> {
  const head = await readHead(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch, false);
  return orderChanges(head.model, head.schema, changes);
}

const batchChanges = (action: SchemaAction, items: unknown[]): ChangeInput[] => items.map((body) => ({ action, body }));

const JOURNAL_ID = { id: { description: 'Journal entry id.' } };
const DELETE_BATCH = 'Delete several entities in one publication';

export const SCHEMA_JOURNAL_SPECS = {
  journal: op('Schema.Journal.List', {
    summary: 'The branch\'s schema journal, newest first', routes: [{ method: 'GET', path: 'Schema/journal' }], output: { status: 200, body: JS.ControlJournalList },
  }, async (ctx) => {
    const scope = ctx.scope!;
    const res = await ctx.services.db.query<JournalRow>(
      `SELECT ${JOURNAL_COLUMNS} FROM ${S}.schema_journal WHERE project_id = $1 AND branch = $2 ORDER BY to_version DESC, created_at DESC LIMIT 500`,
      [scope.project.id, scope.branch],
    );
    return control(ctx, 'SchemaJournal', 'listed', res.rows.map(journalEntry));
  }),
  journalEntry: op('Schema.Journal.Read', {
    summary: 'One journal entry', routes: [{ method: 'GET', path: 'Schema/journal/:id' }], params: JOURNAL_ID, output: { status: 200, body: JS.ControlJournalSingle },
  }, async (ctx) => control(ctx, 'SchemaJournal', 'read', await readEntry(ctx, ctx.inv.params.id ?? ''))),
  recover: op('Schema.Journal.Recover', {
    summary: 'Settle an entry a crash left unsettled', routes: [{ method: 'POST', path: 'Schema/journal/:id/recover' }], params: JOURNAL_ID,
    output: { status: 200, body: JS.ControlJournalSingle }, errors: STATE_ERRORS,
  }, async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    await readEntry(ctx, id);
    await ctx.services.control.schemaCommand(ctx.scope!.project.id, { kind: 'recover', journalId: id });
    return control(ctx, 'SchemaJournal', 'recovered', await readEntry(ctx, id));
  }),
  history: op('Schema.MigrationHistory', {
    summary: 'Journal entries touching one entity, oldest first', routes: [{ method: 'GET', path: 'Schema/migration-history/:entityName' }],
    params: { entityName: { description: 'Entity name.' } }, output: { status: 200, body: JS.ControlJournalList },
  }, async (ctx) => {
    const scope = ctx.scope!;
    const name = ctx.inv.params.entityName ?? '';
    const res = await ctx.services.db.query<JournalRow>(
      `SELECT ${JOURNAL_COLUMNS} FROM ${S}.schema_journal
        WHERE project_id = $1 AND branch = $2 AND ($3 = ANY(entity_names) OR (cardinality(entity_names) = 0 AND entity_name = $3))
        ORDER BY to_version, created_at LIMIT 500`,
      [scope.project.id, scope.branch, name],
    );
    return control(ctx, 'SchemaJournal', 'listed', res.rows.map(journalEntry));
  }),
  // Body optional to ajv: no body reaches the handler, which answers it on `changes` as it always did.
  apply: op('Schema.Migrate.Apply', {
    summary: 'Apply several changes in one transaction, one publication, one journal entry (any failing change: nothing applied)',
    routes: [{ method: 'POST', path: 'Schema/migrate/apply' }], body: JS.ControlMigrateInput, bodyOptional: true, reasons: SCHEMA_REASONS,
    output: { status: 200, body: JS.ControlMigration },
  }, async (ctx) => {
    const res = await migrate(ctx, 'migrate', parseChanges(ctx.inv.body));
    return control(ctx, 'Schema', 'migrated', { publicationVersion: res.publication.version, journalId: res.journalId });
  }),
  rollback: op('Schema.Migrate.Rollback', {
    summary: 'Revert an entry and every later applied one of the branch (fields and entities they added are dropped with their data)',
    routes: [{ method: 'POST', path: 'Schema/migrate/rollback/:journalId' }], params: { journalId: { description: 'Journal entry to revert (with every later applied one).' } },
    output: { status: 200, body: JS.ControlMigration }, errors: STATE_ERRORS,
  }, async (ctx) => {
    const scope = ctx.scope!;
    const journalId = ctx.inv.params.journalId ?? '';
    const res = await ctx.services.control.schemaCommand(scope.project.id, { kind: 'rollback', journalId, branch: scope.branch, actor: ctx.actor.label, correlationId: ctx.inv.correlationId });
    if (res.kind !== 'migrated') throw new Error('unexpected schema command result');
    return control(ctx, 'Schema', 'rolledBack', { publicationVersion: res.result.publication.version, journalId: res.result.journalId });
  }),
  batch: op('Schema.Entities.Batch', {
    summary: 'Create several entities in one publication', routes: [{ method: 'POST', path: 'Schema/entities/batch' }],
    body: JS.ControlBatchInput, bodyOptional: true, reasons: SCHEMA_REASONS, output: { status: 201, body: JS.ControlBatchResult },
  }, async (ctx) => {
    const changes = await ordered(ctx, batchChanges('create', listOf(ctx.inv.body, 'entities')));
    const res = await migrate(ctx, 'batch', changes);
    return control(ctx, 'Schema', 'created', { publicationVersion: res.publication.version, journalId: res.journalId, entityNames: res.plans.map((p) => p.entityName) }, 201);
  }),
  deleteBatch: op('Schema.Entities.DeleteBatch', {
    summary: DELETE_BATCH,
    routes: [{ method: 'POST', path: 'Schema/entities/delete-batch' }, { method: 'DELETE', path: 'Schema/entities/batch', summary: `${DELETE_BATCH} (same as \`POST /Schema/entities/delete-batch\`)` }],
    body: JS.ControlDeleteBatchInput, bodyOptional: true, reasons: SCHEMA_REASONS, output: { status: 200, body: JS.ControlBatchResult },
  }, async (ctx) => {
    const names = listOf(ctx.inv.body, 'entityNames');
    names.forEach((n, i) => {
      if (typeof n !== 'string') throw validationFailed('Schema.InvalidEntityName', 'entity names must be strings', `entityNames[${i}]`);
    });
    const changes = await ordered(ctx, batchChanges('delete', names.map((entityName) => ({ entityName }))));
    const res = await migrate(ctx, 'batch', changes);
    return control(ctx, 'Schema', 'deleted', { publicationVersion: res.publication.version, journalId: res.journalId, entityNames: res.plans.map((p) => p.entityName) });
  }),
  snapshotCreate: op('Schema.Snapshots.Create', {
    summary: 'Snapshot the branch head\'s definitions', routes: [{ method: 'POST', path: 'Schema/snapshots' }], output: { status: 201, body: JS.ControlSnapshotSingle },
  }, async (ctx) => {
    const res = await ctx.services.control.schemaCommand(ctx.scope!.project.id, { kind: 'snapshot', branch: ctx.scope!.branch });
    if (res.kind !== 'snapshot') throw new Error('unexpected schema command result');
    return control(ctx, 'SchemaSnapshot', 'created', { id: res.id, publicationVersion: res.publicationVersion }, 201);
  }),
  snapshotRead: op('Schema.Snapshots.Read', {
    summary: 'A snapshot with its definitions', routes: [{ method: 'GET', path: 'Schema/snapshots/:id' }], params: { id: { description: 'Snapshot id.' } },
    output: { status: 200, body: JS.ControlSnapshotSingle },
  }, async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    if (!UUID.test(id)) throw notFound('Schema.SnapshotNotFound', 'snapshot not found');
    const res = await ctx.services.db.query<{ id: string; publication_version: string; entities: unknown[] }>(
      `SELECT id, publication_version, entities FROM ${S}.schema_snapshots WHERE project_id = $1 AND branch = $2 AND id = $3`,
      [ctx.scope!.project.id, ctx.scope!.branch, id],
    );
    const row = res.rows[0];
    if (row === undefined) throw notFound('Schema.SnapshotNotFound', 'snapshot not found');
    return control(ctx, 'SchemaSnapshot', 'read', { id: row.id, publicationVersion: Number(row.publication_version), entities: row.entities });
  }),
  snapshotList: op('Schema.Snapshots.List', {
    summary: 'Snapshots of the branch', routes: [{ method: 'GET', path: 'Schema/snapshots' }], output: { status: 200, body: JS.ControlSnapshotList },
  }, async (ctx) => {
    const res = await ctx.services.db.query<{ id: string; publication_version: string; created_at: string | Date }>(
      `SELECT id, publication_version, created_at FROM ${S}.schema_snapshots WHERE project_id = $1 AND branch = $2 ORDER BY created_at DESC LIMIT 500`,
      [ctx.scope!.project.id, ctx.scope!.branch],
    );
    return control(ctx, 'SchemaSnapshot', 'listed', res.rows.map((r) => ({ id: r.id, publicationVersion: Number(r.publication_version), createdAt: new Date(r.created_at).toISOString() })));
  }),
};
