import { notFound } from '../../errors/service-error.js';
import { diffModels, fieldChanges, resolveModelRef } from '../../control/schema-diff.js';
import { planChange, readHead, type SchemaAction } from '../../control/schema-change.js';
import { nextPublicationVersion } from '../../control/publication-counter.js';
import { findEntity } from '../../publication/model.js';
import { collectionName } from '../../publication/naming.js';
import { parseEntityDefinition } from '../../publication/validate-definition.js';
import { control } from '../envelopes.js';
import { SCHEMA_JOURNAL_SPECS } from './schema-journal.js';
import { handlerDiff } from '../../authored/handler-plan.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import type { OperationContract } from '../contract/index.js';
import { SCHEMA_ENTITY_SCHEMAS as ES } from './schema-entity-schemas.js';
import { SCHEMA_REASONS, SCHEMA_TAG, schemaOp } from './schema-op.js';

const op = (id: string, contract: Parameters<typeof schemaOp>[2], execute: Parameters<typeof schemaOp>[3]): DeclaredSpec => schemaOp(SCHEMA_TAG, id, contract, execute);

const PROPOSAL_REQUIRED = 'On a branch with `requireProposal` every mutating `/Schema` route answers 403 `Branch.ProposalRequired`.';
const DELETE = 'Delete an entity and its table on the branch';
const REF = 'Digits: a publicationVersion; anything else: a branch name (its head). Unknown → 404.';

/**
 * An entity definition body (create, alter, preview, validate): documented, checked by the handler
 * (schema-entity-schemas.ts `checkedByHandler` says why). Optional to ajv, so that no body at all
 * still reaches the handler and gets its `Schema.InvalidBody` on `$`.
 */
const DEFINITION_BODY: Pick<OperationContract, 'body' | 'bodyOptional' | 'reasons'> = { body: ES.ControlEntityDefinitionInput, bodyOptional: true, reasons: SCHEMA_REASONS };

/** DELETE takes `entityName` from the body or the query string. */
function deleteBody(ctx: OperationContext): unknown {
  const q = ctx.inv.query.get('entityName');
  if (q !== undefined) return { entityName: q };
  return ctx.inv.body;
}

function change(id: string, contract: Parameters<typeof schemaOp>[2], action: SchemaAction, status: number, state: string): DeclaredSpec {
  return op(id, contract, async (ctx) => {
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
  create: change('Schema.Entities.Create', {
    summary: 'Create an entity on the branch (one publication)', description: PROPOSAL_REQUIRED,
    routes: [{ method: 'POST', path: 'Schema/entities' }], ...DEFINITION_BODY, output: { status: 201, body: ES.ControlSchemaChangeResult },
  }, 'create', 201, 'created'),
  alter: change('Schema.Entities.Alter', {
    summary: 'Replace an entity\'s definition on the branch (one publication)', description: `Adding a nullable field is metadata-only in PostgreSQL (no table rewrite). ${PROPOSAL_REQUIRED}`,
    routes: [{ method: 'PUT', path: 'Schema/entities' }], ...DEFINITION_BODY, output: { status: 200, body: ES.ControlSchemaChangeResult },
  }, 'alter', 200, 'altered'),
  // The entity is named by the query string or by the body; neither is required alone, so the body is optional.
  delete: change('Schema.Entities.Delete', {
    summary: DELETE, description: PROPOSAL_REQUIRED,
    routes: [{ method: 'DELETE', path: 'Schema/entities' }, { method: 'POST', path: 'Schema/entities/delete', summary: `${DELETE} (same as \`DELETE /Schema/entities\`)` }],
    query: { entityName: { description: 'Entity to delete (or `{ entityName }` as the body).' } },
    body: ES.ControlEntityNameInput, bodyOptional: true, reasons: SCHEMA_REASONS,
    output: { status: 200, body: ES.ControlSchemaChangeResult },
  }, 'delete', 200, 'deleted'),
  preview: op('Schema.Entities.Preview', {
    summary: 'What a create or alter would change (no SQL, applies nothing)',
    routes: [{ method: 'POST', path: 'Schema/entities/preview' }], ...DEFINITION_BODY, output: { status: 200, body: ES.ControlSchemaPreview },
  }, async (ctx) => {
    const scope = ctx.scope!;
    const head = await readHead(ctx.services.db, scope.project.id, scope.branch, false);
    const action: SchemaAction = findEntity(head.model, String((ctx.inv.body as Record<string, unknown> | null)?.entityName ?? '')) === undefined ? 'create' : 'alter';
    const plan = planChange(head.model, head.schema, action, ctx.inv.body);
    return control(ctx, 'Schema', 'previewed', { action, entityName: plan.entityName, changes: fieldChanges(plan.before, plan.after), fromVersion: head.version, toVersion: await nextPublicationVersion(ctx.services.db, scope.project.id, head.version) });
  }),
  validate: op('Schema.Entities.Validate', {
    summary: 'Check a definition without applying it (200 with `valid: false` and the problems)',
    routes: [{ method: 'POST', path: 'Schema/entities/validate' }], ...DEFINITION_BODY, output: { status: 200, body: ES.ControlSchemaValidation },
    errors: [400, 401, 403, 404, 413, 422],
  }, async (ctx) => {
    const { def, problems, problemCount } = parseEntityDefinition(ctx.inv.body, ctx.scope!.publication.record.model);
    return control(ctx, 'Schema', def === undefined ? 'invalid' : 'valid', def === undefined
      ? { valid: false, errors: problems, errorCount: problemCount, truncated: problemCount > problems.length }
      : { valid: true, errors: problems });
  }),
  metadata: op('Schema.Entities.Metadata', {
    summary: 'Every entity of the serving publication with its operations and bindings',
    routes: [{ method: 'GET', path: 'Schema/entities/metadata' }], output: { status: 200, body: ES.ControlSchemaMetadata },
  }, async (ctx) => {
    const pub = ctx.scope!.publication;
    return control(ctx, 'Schema', 'read', {
      publicationVersion: pub.version,
      descriptorHash: pub.record.descriptorHash,
      entities: [...pub.entities.keys()].map((n) => entityMetadata(ctx, n)),
    });
  }),
  metadataEntity: op('Schema.Entities.MetadataEntity', {
    summary: 'One entity\'s metadata', routes: [{ method: 'GET', path: 'Schema/entities/metadata/:entityName' }],
    params: { entityName: { description: 'Entity name.' } }, output: { status: 200, body: ES.ControlEntityMetadataSingle },
  }, async (ctx) => {
    const name = ctx.inv.params.entityName ?? '';
    if (!ctx.scope!.publication.entities.has(name)) throw notFound('Schema.EntityNotFound', `entity '${name}' does not exist`);
    return control(ctx, 'Schema', 'read', { publicationVersion: ctx.scope!.publication.version, ...entityMetadata(ctx, name) });
  }),
  diff: op('Schema.Diff', {
    summary: 'Entities added, removed and changed between two publications or branch heads (and handlers, in `handlers`)', routes: [{ method: 'GET', path: 'Schema/diff' }],
    query: { from: { description: `${REF} Default: the version before \`to\`.` }, to: { description: `${REF} Default: the branch head.` } },
    output: { status: 200, body: ES.ControlSchemaDiff },
  }, async (ctx) => {
    const scope = ctx.scope!;
    const db = ctx.services.db;
    const toText = ctx.inv.query.get('to');
    const fromText = ctx.inv.query.get('from');
    const to = toText === undefined ? { ref: scope.publication.version, model: scope.publication.record.model } : await resolveModelRef(db, scope.project.id, scope.branch, toText);
    const from = fromText === undefined
      ? await resolveModelRef(db, scope.project.id, scope.branch, String(Math.max(0, Number(to.ref) - 1)))
      : await resolveModelRef(db, scope.project.id, scope.branch, fromText);
    // `handlers` only when some differ: a diff of entity changes answers as it always did.
    const handlers = handlerDiff(from.model, to.model);
    return control(ctx, 'Schema', 'diffed', { from: from.ref, to: to.ref, ...diffModels(from.model, to.model), ...(handlers.length === 0 ? {} : { handlers }) });
  }),
  ...SCHEMA_JOURNAL_SPECS,
};
