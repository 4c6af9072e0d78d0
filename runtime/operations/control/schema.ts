import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { planChange, readHead, type SchemaAction } from '../../control/schema-change.js';
import { findEntity } from '../../publication/model.js';
import { collectionName } from '../../publication/naming.js';
import { parseEntityDefinition } from '../../publication/validate-definition.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

/** Schema routes are project-scoped and need the platform admin (project roles arrive with governance). */
const schemaOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** DELETE takes `entityName` from the body or the query string. */
function deleteBody(ctx: OperationContext): unknown {
  const q = ctx.inv.query.get('entityName');
  if (q !== undefined) return { entityName: q };
  return ctx.inv.body;
}

function change(id: string, action: SchemaAction, status: number, state: string): OperationSpec {
  return schemaOp(id, async (ctx) => {
    const scope = ctx.scope!;
    const body = action === 'delete' ? deleteBody(ctx) : ctx.inv.body;
    const res = await ctx.services.control.applySchemaChange({
      tenantId: scope.tenant.id, projectId: scope.project.id, branch: scope.branch, action, body,
      actor: ctx.actor.label, correlationId: ctx.inv.correlationId,
    });
    const entity = findEntity(res.publication.model, res.entityName);
    return control(ctx, 'Schema', state, {
      entityName: res.entityName,
      collection: collectionName(res.entityName),
      publicationVersion: res.publication.version,
      descriptorHash: res.publication.descriptorHash,
      journalId: res.journalId,
      statements: res.statements,
      ...(entity === undefined ? {} : { definition: entity }),
    }, status);
  });
}

function entityMetadata(ctx: OperationContext, name: string) {
  const pub = ctx.scope!.publication;
  const e = pub.entities.get(name)!;
  return {
    entityName: name,
    collection: e.collection,
    definition: e.def,
    relations: [...e.relations.values()],
    operations: [...pub.operations.values()].filter((o) => o.entity === name),
    bindings: pub.bindings.filter((b) => b.capabilityId.startsWith(`Entity.${name}.`)),
  };
}

const JOURNAL_COLUMNS = `id, action, entity_name AS "entityName", definition, statements, from_version AS "fromVersion", to_version AS "toVersion", state, actor, correlation_id AS "correlationId", created_at AS "createdAt"`;

export const SCHEMA_SPECS = {
  create: change('Schema.Entities.Create', 'create', 201, 'created'),
  alter: change('Schema.Entities.Alter', 'alter', 200, 'altered'),
  delete: change('Schema.Entities.Delete', 'delete', 200, 'deleted'),
  preview: schemaOp('Schema.Entities.Preview', async (ctx) => {
    const scope = ctx.scope!;
    const head = await readHead(ctx.services.db, scope.project.id, scope.branch, false);
    const action: SchemaAction = findEntity(head.model, String((ctx.inv.body as Record<string, unknown> | null)?.entityName ?? '')) === undefined ? 'create' : 'alter';
    const plan = planChange(head.model, head.schema, action, ctx.inv.body);
    return control(ctx, 'Schema', 'previewed', { action, entityName: plan.entityName, before: plan.before, after: plan.after, statements: plan.statements, fromVersion: head.version, toVersion: head.version + 1 });
  }),
  validate: schemaOp('Schema.Entities.Validate', async (ctx) => {
    const { def, problems, problemCount } = parseEntityDefinition(ctx.inv.body, ctx.scope!.publication.record.model);
    return control(ctx, 'Schema', def === undefined ? 'invalid' : 'valid', def === undefined
      ? { valid: false, errors: problems, errorCount: problemCount, truncated: problemCount > problems.length }
      : { valid: true, errors: problems });
  }),
  metadata: schemaOp('Schema.Entities.Metadata', async (ctx) => {
    const pub = ctx.scope!.publication;
    return control(ctx, 'Schema', 'read', {
      publicationVersion: pub.version,
      descriptorHash: pub.record.descriptorHash,
      entities: [...pub.entities.keys()].map((n) => entityMetadata(ctx, n)),
    });
  }),
  metadataEntity: schemaOp('Schema.Entities.MetadataEntity', async (ctx) => {
    const name = ctx.inv.params.entityName ?? '';
    if (!ctx.scope!.publication.entities.has(name)) throw notFound('Schema.EntityNotFound', `entity '${name}' does not exist`);
    return control(ctx, 'Schema', 'read', { publicationVersion: ctx.scope!.publication.version, ...entityMetadata(ctx, name) });
  }),
  diff: schemaOp('Schema.Diff', async (ctx) => {
    const scope = ctx.scope!;
    const toText = ctx.inv.query.get('to');
    const to = toText === undefined ? scope.publication.version : Number(toText);
    const fromText = ctx.inv.query.get('from');
    const from = fromText === undefined ? Math.max(0, to - 1) : Number(fromText);
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < 0) throw validationFailed('Schema.InvalidVersion', 'from and to must be publication versions', 'from');
    const rows = await ctx.services.db.query<{ version: string; model: { entities: Array<{ entityName: string }> } }>(
      `SELECT version, model FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1 AND branch = $2 AND version = ANY($3::bigint[])`,
      [scope.project.id, scope.branch, [from, to]],
    );
    const model = (v: number) => (v === 0 ? { entities: [] } : rows.rows.find((r) => Number(r.version) === v)?.model);
    const a = model(from);
    const b = model(to);
    if (a === undefined || b === undefined) throw notFound('Schema.PublicationNotFound', 'publication version not found');
    const names = (m: typeof a) => new Map(m.entities.map((e) => [e.entityName, JSON.stringify(e)]));
    const before = names(a);
    const after = names(b);
    return control(ctx, 'Schema', 'diffed', {
      from, to,
      added: [...after.keys()].filter((n) => !before.has(n)),
      removed: [...before.keys()].filter((n) => !after.has(n)),
      changed: [...after.keys()].filter((n) => before.has(n) && before.get(n) !== after.get(n)),
    });
  }),
  journal: schemaOp('Schema.Journal.List', async (ctx) => {
    const scope = ctx.scope!;
    const res = await ctx.services.db.query(`SELECT ${JOURNAL_COLUMNS} FROM ${PLATFORM_SCHEMA}.schema_journal WHERE project_id = $1 AND branch = $2 ORDER BY to_version DESC LIMIT 200`, [scope.project.id, scope.branch]);
    return control(ctx, 'SchemaJournal', 'listed', res.rows.map(fixVersions));
  }),
  journalEntry: schemaOp('Schema.Journal.Read', async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    if (!UUID.test(id)) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
    const res = await ctx.services.db.query(`SELECT ${JOURNAL_COLUMNS} FROM ${PLATFORM_SCHEMA}.schema_journal WHERE project_id = $1 AND id = $2`, [ctx.scope!.project.id, id]);
    if (res.rows[0] === undefined) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
    return control(ctx, 'SchemaJournal', 'read', fixVersions(res.rows[0]));
  }),
};

function fixVersions(row: Record<string, unknown>): Record<string, unknown> {
  return { ...row, fromVersion: Number(row.fromVersion), toVersion: Number(row.toVersion) };
}

