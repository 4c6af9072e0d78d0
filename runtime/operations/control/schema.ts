import { notFound } from '../../errors/service-error.js';
import { diffModels, fieldChanges, resolveModelRef } from '../../control/schema-diff.js';
import { planChange, readHead, type SchemaAction } from '../../control/schema-change.js';
import { nextPublicationVersion } from '../../control/publication-counter.js';
import { findEntity } from '../../publication/model.js';
import { collectionName } from '../../publication/naming.js';
import { parseEntityDefinition } from '../../publication/validate-definition.js';
import { control } from '../envelopes.js';
import { SCHEMA_JOURNAL_SPECS } from './schema-journal.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

/** Schema routes are project-scoped and need the platform admin (project roles arrive with governance). */
const schemaOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

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

export const SCHEMA_SPECS = {
  create: change('Schema.Entities.Create', 'create', 201, 'created'),
  alter: change('Schema.Entities.Alter', 'alter', 200, 'altered'),
  delete: change('Schema.Entities.Delete', 'delete', 200, 'deleted'),
  preview: schemaOp('Schema.Entities.Preview', async (ctx) => {
    const scope = ctx.scope!;
    const head = await readHead(ctx.services.db, scope.project.id, scope.branch, false);
    const action: SchemaAction = findEntity(head.model, String((ctx.inv.body as Record<string, unknown> | null)?.entityName ?? '')) === undefined ? 'create' : 'alter';
    const plan = planChange(head.model, head.schema, action, ctx.inv.body);
    return control(ctx, 'Schema', 'previewed', { action, entityName: plan.entityName, changes: fieldChanges(plan.before, plan.after), fromVersion: head.version, toVersion: await nextPublicationVersion(ctx.services.db, scope.project.id, head.version) });
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
    const db = ctx.services.db;
    const toText = ctx.inv.query.get('to');
    const fromText = ctx.inv.query.get('from');
    const to = toText === undefined ? { ref: scope.publication.version, model: scope.publication.record.model } : await resolveModelRef(db, scope.project.id, scope.branch, toText);
    const from = fromText === undefined
      ? await resolveModelRef(db, scope.project.id, scope.branch, String(Math.max(0, Number(to.ref) - 1)))
      : await resolveModelRef(db, scope.project.id, scope.branch, fromText);
    return control(ctx, 'Schema', 'diffed', { from: from.ref, to: to.ref, ...diffModels(from.model, to.model) });
  }),
  ...SCHEMA_JOURNAL_SPECS,
};
