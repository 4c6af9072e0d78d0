import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { readHead, type SchemaAction } from '../../control/schema-change.js';
import type { MigrationKind, ChangeInput } from '../../control/schema-migration.js';
import { orderChanges } from '../../control/schema-rollback.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

const S = PLATFORM_SCHEMA;

const schemaOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Most changes one migration, batch or delete-batch takes. */
export const MAX_MIGRATION_CHANGES = 100;

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

export const SCHEMA_JOURNAL_SPECS = {
  journal: schemaOp('Schema.Journal.List', async (ctx) => {
    const scope = ctx.scope!;
    const res = await ctx.services.db.query<JournalRow>(
      `SELECT ${JOURNAL_COLUMNS} FROM ${S}.schema_journal WHERE project_id = $1 AND branch = $2 ORDER BY to_version DESC, created_at DESC LIMIT 500`,
      [scope.project.id, scope.branch],
    );
    return control(ctx, 'SchemaJournal', 'listed', res.rows.map(journalEntry));
  }),
  journalEntry: schemaOp('Schema.Journal.Read', async (ctx) => control(ctx, 'SchemaJournal', 'read', await readEntry(ctx, ctx.inv.params.id ?? ''))),
  recover: schemaOp('Schema.Journal.Recover', async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    await readEntry(ctx, id);
    await ctx.services.control.schemaCommand(ctx.scope!.project.id, { kind: 'recover', journalId: id });
    return control(ctx, 'SchemaJournal', 'recovered', await readEntry(ctx, id));
  }),
  history: schemaOp('Schema.MigrationHistory', async (ctx) => {
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
  apply: schemaOp('Schema.Migrate.Apply', async (ctx) => {
    const res = await migrate(ctx, 'migrate', parseChanges(ctx.inv.body));
    return control(ctx, 'Schema', 'migrated', { publicationVersion: res.publication.version, journalId: res.journalId });
  }),
  rollback: schemaOp('Schema.Migrate.Rollback', async (ctx) => {
    const scope = ctx.scope!;
    const journalId = ctx.inv.params.journalId ?? '';
    const res = await ctx.services.control.schemaCommand(scope.project.id, { kind: 'rollback', journalId, branch: scope.branch, actor: ctx.actor.label, correlationId: ctx.inv.correlationId });
    if (res.kind !== 'migrated') throw new Error('unexpected schema command result');
    return control(ctx, 'Schema', 'rolledBack', { publicationVersion: res.result.publication.version, journalId: res.result.journalId });
  }),
  batch: schemaOp('Schema.Entities.Batch', async (ctx) => {
    const changes = await ordered(ctx, batchChanges('create', listOf(ctx.inv.body, 'entities')));
    const res = await migrate(ctx, 'batch', changes);
    return control(ctx, 'Schema', 'created', { publicationVersion: res.publication.version, journalId: res.journalId, entityNames: res.plans.map((p) => p.entityName) }, 201);
  }),
  deleteBatch: schemaOp('Schema.Entities.DeleteBatch', async (ctx) => {
    const names = listOf(ctx.inv.body, 'entityNames');
    names.forEach((n, i) => {
      if (typeof n !== 'string') throw validationFailed('Schema.InvalidEntityName', 'entity names must be strings', `entityNames[${i}]`);
    });
    const changes = await ordered(ctx, batchChanges('delete', names.map((entityName) => ({ entityName }))));
    const res = await migrate(ctx, 'batch', changes);
    return control(ctx, 'Schema', 'deleted', { publicationVersion: res.publication.version, journalId: res.journalId, entityNames: res.plans.map((p) => p.entityName) });
  }),
  snapshotCreate: schemaOp('Schema.Snapshots.Create', async (ctx) => {
    const res = await ctx.services.control.schemaCommand(ctx.scope!.project.id, { kind: 'snapshot', branch: ctx.scope!.branch });
    if (res.kind !== 'snapshot') throw new Error('unexpected schema command result');
    return control(ctx, 'SchemaSnapshot', 'created', { id: res.id, publicationVersion: res.publicationVersion }, 201);
  }),
  snapshotRead: schemaOp('Schema.Snapshots.Read', async (ctx) => {
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
  snapshotList: schemaOp('Schema.Snapshots.List', async (ctx) => {
    const res = await ctx.services.db.query<{ id: string; publication_version: string; created_at: string | Date }>(
      `SELECT id, publication_version, created_at FROM ${S}.schema_snapshots WHERE project_id = $1 AND branch = $2 ORDER BY created_at DESC LIMIT 500`,
      [ctx.scope!.project.id, ctx.scope!.branch],
    );
    return control(ctx, 'SchemaSnapshot', 'listed', res.rows.map((r) => ({ id: r.id, publicationVersion: Number(r.publication_version), createdAt: new Date(r.created_at).toISOString() })));
  }),
};
