/**
 * Schemas of the `/Schema/entities…` and `/Schema/diff` operations (CONTRACT "Entities",
 * "Control plane" → "Schema journal and migrations"), referred to by their contracts in schema.ts.
 */
import { schemaRef, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { controlEnvelope, str, version } from './control-schemas.js';

const names = (description: string): Json => ({ type: 'array', items: { type: 'string' }, description });

/**
 * A body whose checks stay with the handler, documented by `shape`. An entity definition is
 * judged by runtime/publication/validate-definition.ts, which answers EVERY problem at once
 * (`error.details.errors`, the first one's reason code such as `Schema.InvalidEntityName` or
 * `Schema.UnknownFieldType`, and `Schema.InvalidBody` on field `$` for a body that is not an
 * object), and `/Schema/entities/validate` answers a bad definition with 200 `valid: false`.
 * A schema ajv enforced would answer first, with one problem and other reason codes; so the
 * declared body takes anything and `shape` only documents it.
 */
export const checkedByHandler = (shape: Json, what: string): Json => ({
  description: `${what} Checked by the server, which answers every problem it finds at once (422 \`error.details.errors\`).`,
  anyOf: [shape, { description: 'Any other body: the server answers its problems.' }],
});

export const SCHEMA_ENTITY_SCHEMAS = defineSchemas({
  ControlEntityDefinitionInput: checkedByHandler(schemaRef('ControlEntityDefinition'), 'A `ControlEntityDefinition`.'),
  // Checked by the handler too: `DELETE ?entityName=` ignores the body, and a body that names no entity
  // (or none, or not an object) answers 422 `Schema.InvalidEntityName` on `entityName`.
  ControlEntityNameInput: checkedByHandler({ type: 'object', required: ['entityName'], properties: { entityName: str() } }, '`{ entityName }`: the entity to delete.'),
  ControlSchemaChange: {
    type: 'object', required: ['entityName', 'collection', 'publicationVersion', 'descriptorHash', 'journalId', 'statements'],
    properties: {
      entityName: str(), collection: str('Path segment of the entity\'s REST routes.'),
      publicationVersion: version('The branch\'s new head publication.'), descriptorHash: str('`sha256:<hex>`.'), journalId: str('Journal entry of the change.'),
      statements: names('DDL the change ran.'), definition: schemaRef('ControlEntityDefinition'),
    },
  },
  ControlSchemaChangeResult: controlEnvelope('Schema', ['created', 'altered', 'deleted'], schemaRef('ControlSchemaChange')),
  ControlSchemaPreview: controlEnvelope('Schema', 'previewed', {
    type: 'object', required: ['action', 'entityName', 'changes', 'fromVersion', 'toVersion'],
    properties: {
      action: { type: 'string', enum: ['create', 'alter'] }, entityName: str(),
      changes: { type: 'array', items: schemaRef('ControlFieldChange') },
      fromVersion: version('The branch head now.'), toVersion: version('The version the change would get.'),
    },
  }),
  ControlSchemaValidation: controlEnvelope('Schema', ['valid', 'invalid'], {
    type: 'object', required: ['valid', 'errors'],
    properties: {
      valid: { type: 'boolean' },
      errors: { type: 'array', items: { type: 'object', required: ['field', 'reasonCode', 'message'], properties: { field: str(), reasonCode: str(), message: str() } } },
      errorCount: { type: 'integer', minimum: 0 }, truncated: { type: 'boolean' },
    },
  }),
  ControlEntityMetadata: {
    type: 'object', required: ['entityName', 'collection', 'definition', 'relations', 'operations', 'bindings'],
    properties: {
      entityName: str(), collection: str(), definition: schemaRef('ControlEntityDefinition'),
      relations: { type: 'array', items: { type: 'object' } },
      operations: { type: 'array', items: { type: 'object' }, description: 'The entity\'s operations (operationId, kind, method, path, grants).' },
      bindings: { type: 'array', items: { type: 'object' }, description: 'Exposure bindings of those operations per protocol.' },
    },
  },
  ControlSchemaMetadata: controlEnvelope('Schema', 'read', {
    type: 'object', required: ['publicationVersion', 'descriptorHash', 'entities'],
    properties: { publicationVersion: version(), descriptorHash: str(), entities: { type: 'array', items: schemaRef('ControlEntityMetadata') } },
  }),
  ControlEntityMetadataSingle: controlEnvelope('Schema', 'read', {
    allOf: [{ type: 'object', required: ['publicationVersion'], properties: { publicationVersion: version() } }, schemaRef('ControlEntityMetadata')],
  }),
  ControlSchemaDiff: controlEnvelope('Schema', 'diffed', {
    type: 'object', required: ['from', 'to', 'added', 'removed', 'changed'],
    properties: {
      from: { type: ['integer', 'string'], description: 'The resolved `from` (a publication version).' },
      to: { type: ['integer', 'string'], description: 'The resolved `to`.' },
      added: names('Entities in `to` only.'), removed: names('Entities in `from` only.'), changed: names('Entities whose definition differs.'),
      handlers: {
        type: 'array', description: 'One entry per handler that differs, in name order (the proposal diff vocabulary); absent when none does.',
        items: { type: 'object', required: ['op', 'name'], properties: { op: { type: 'string', enum: ['addHandler', 'alterHandler', 'dropHandler'] }, name: { type: 'string' } } },
      },
    },
  }),
});
