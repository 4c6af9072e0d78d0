/**
 * `/Schema/entities…`, `/Schema/diff`: entity definitions of the branch named by
 * `X-Service-Branch` (default `main`), one publication per change (CONTRACT "Entities",
 * "Control plane" → "Schema journal and migrations"). Platform admin only. Registered by
 * openapi-control-plane.ts; the journal, migrations and snapshots are in openapi-schema-journal.ts.
 */
import { schemaRef, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { READ_ERRORS, WRITE_ERRORS, controlEnvelope, pathParam, queryParam, str, version } from './openapi-control-common.js';

export const SCHEMA_ENTITY_SCHEMA_NAMES = [
  'ControlEntityNameInput', 'ControlSchemaChange', 'ControlSchemaChangeResult', 'ControlSchemaPreview', 'ControlSchemaValidation',
  'ControlEntityMetadata', 'ControlSchemaMetadata', 'ControlEntityMetadataSingle', 'ControlSchemaDiff',
] as const;

const names = (description: string): Json => ({ type: 'array', items: { type: 'string' }, description });

export function schemaEntitySchemas(): Json {
  return {
    ControlEntityNameInput: { type: 'object', required: ['entityName'], properties: { entityName: str() } },
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
      },
    }),
  };
}

const REF = 'Digits: a publicationVersion; anything else: a branch name (its head). Unknown → 404.';
export function schemaEntityParameters(): Json {
  return {
    ControlEntityNamePath: pathParam('entityName', 'Entity name.'),
    ControlEntityNameQuery: queryParam('entityName', 'Entity to delete (or `{ entityName }` as the body).'),
    ControlDiffFrom: queryParam('from', `${REF} Default: the version before \`to\`.`),
    ControlDiffTo: queryParam('to', `${REF} Default: the branch head.`),
  };
}

const TAG = 'Schema';
const op = (o: Omit<StaticOp, 'tag' | 'auth'>): StaticOp => ({ ...o, tag: TAG, auth: 'admin' });
const DELETE = 'Delete an entity and its table on the branch';
const PROPOSAL_REQUIRED = 'On a branch with `requireProposal` every mutating `/Schema` route answers 403 `Branch.ProposalRequired`.';

export const SCHEMA_ENTITY_OPS: StaticOp[] = [
  op({ method: 'post', path: '/Schema/entities', operationId: 'Schema.Entities.Create', summary: 'Create an entity on the branch (one publication)', description: PROPOSAL_REQUIRED, body: 'ControlEntityDefinition', status: 201, response: 'ControlSchemaChangeResult', errors: WRITE_ERRORS }),
  op({ method: 'put', path: '/Schema/entities', operationId: 'Schema.Entities.Alter', summary: 'Replace an entity\'s definition on the branch (one publication)', description: `Adding a nullable field is metadata-only in PostgreSQL (no table rewrite). ${PROPOSAL_REQUIRED}`, body: 'ControlEntityDefinition', status: 200, response: 'ControlSchemaChangeResult', errors: WRITE_ERRORS }),
  op({ method: 'delete', path: '/Schema/entities', operationId: 'Schema.Entities.Delete', summary: DELETE, description: PROPOSAL_REQUIRED, params: ['ControlEntityNameQuery'], status: 200, response: 'ControlSchemaChangeResult', errors: WRITE_ERRORS }),
  op({ method: 'post', path: '/Schema/entities/delete', operationId: 'Schema.Entities.DeleteAlias', summary: `${DELETE} (same as \`DELETE /Schema/entities\`)`, description: PROPOSAL_REQUIRED, body: 'ControlEntityNameInput', status: 200, response: 'ControlSchemaChangeResult', errors: WRITE_ERRORS }),
  op({ method: 'post', path: '/Schema/entities/preview', operationId: 'Schema.Entities.Preview', summary: 'What a create or alter would change (no SQL, applies nothing)', body: 'ControlEntityDefinition', status: 200, response: 'ControlSchemaPreview', errors: WRITE_ERRORS }),
  op({ method: 'post', path: '/Schema/entities/validate', operationId: 'Schema.Entities.Validate', summary: 'Check a definition without applying it (200 with `valid: false` and the problems)', body: 'ControlEntityDefinition', status: 200, response: 'ControlSchemaValidation', errors: [400, 401, 403, 404, 413, 422] }),
  op({ method: 'get', path: '/Schema/entities/metadata', operationId: 'Schema.Entities.Metadata', summary: 'Every entity of the serving publication with its operations and bindings', status: 200, response: 'ControlSchemaMetadata', errors: READ_ERRORS }),
  op({ method: 'get', path: '/Schema/entities/metadata/{entityName}', operationId: 'Schema.Entities.MetadataEntity', summary: 'One entity\'s metadata', params: ['ControlEntityNamePath'], status: 200, response: 'ControlEntityMetadataSingle', errors: READ_ERRORS }),
  op({ method: 'get', path: '/Schema/diff', operationId: 'Schema.Diff', summary: 'Entities added, removed and changed between two publications or branch heads', params: ['ControlDiffFrom', 'ControlDiffTo'], status: 200, response: 'ControlSchemaDiff', errors: READ_ERRORS }),
];

export const SCHEMA_TAG = { name: TAG, description: 'Entity definitions, the schema journal, migrations and snapshots of a branch (`X-Service-Branch`).' };
