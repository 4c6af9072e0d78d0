/**
 * The schema journal, migrations and snapshots of a branch (CONTRACT "Control plane" →
 * "Schema journal and migrations"), and schema transitions (→ "Schema transitions").
 * Platform admin only, branch from `X-Service-Branch`. Registered by openapi-control-plane.ts.
 */
import { schemaRef, uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { READ_ERRORS, WRITE_ERRORS, at, controlEnvelope, controlList, controlSingle, pathParam, str, version } from './openapi-control-common.js';

export const SCHEMA_JOURNAL_SCHEMA_NAMES = [
  'ControlJournalEntry', 'ControlJournalSingle', 'ControlJournalList', 'ControlMigrateInput', 'ControlMigration', 'ControlBatchInput',
  'ControlDeleteBatchInput', 'ControlBatchResult', 'ControlSnapshot', 'ControlSnapshotSingle', 'ControlSnapshotList',
  'ControlTransitionInput', 'ControlTransition', 'ControlTransitionSingle', 'ControlTransitionList', 'ControlTransitionPreview',
] as const;

const TRANSITION_STATES = ['pending', 'running', 'completed', 'failed', 'rolledBack'];
const names = (): Json => ({ type: 'array', items: { type: 'string' } });

function journalSchemas(): Json {
  return {
    ControlJournalEntry: {
      type: 'object', required: ['id', 'publicationVersion', 'change', 'state', 'at'],
      properties: {
        id: uuidSchema(), publicationVersion: version('The publication the change made.'),
        change: {
          type: 'object', required: ['action'],
          description: 'One entity: `{ action: create|alter|delete, entityName, definition? }`; otherwise `{ action: migrate|merge|rollback|batch|transition, … }`.',
          properties: { action: { type: 'string', enum: ['create', 'alter', 'delete', 'migrate', 'merge', 'rollback', 'batch', 'transition'] }, entityName: str(), definition: schemaRef('ControlEntityDefinition') },
        },
        state: { type: 'string', enum: ['applied', 'rolledBack', 'failed'] },
        at: at(),
      },
    },
    ControlJournalSingle: controlSingle('SchemaJournal', ['read', 'recovered'], 'ControlJournalEntry'),
    ControlJournalList: controlList('SchemaJournal', 'ControlJournalEntry'),
    ControlMigrateInput: {
      type: 'object', required: ['changes'], additionalProperties: false,
      properties: {
        changes: {
          type: 'array', minItems: 1,
          items: {
            oneOf: [
              { type: 'object', required: ['action', 'definition'], properties: { action: { type: 'string', enum: ['create', 'alter'] }, definition: schemaRef('ControlEntityDefinition') } },
              { type: 'object', required: ['action', 'entityName'], properties: { action: { type: 'string', const: 'delete' }, entityName: str() } },
            ],
          },
        },
      },
    },
    ControlMigration: controlEnvelope('Schema', ['migrated', 'rolledBack'], {
      type: 'object', required: ['publicationVersion', 'journalId'], properties: { publicationVersion: version(), journalId: str() },
    }),
    ControlBatchInput: { type: 'object', required: ['entities'], properties: { entities: { type: 'array', minItems: 1, items: schemaRef('ControlEntityDefinition') } } },
    ControlDeleteBatchInput: { type: 'object', required: ['entityNames'], properties: { entityNames: { ...names(), minItems: 1 } } },
    ControlBatchResult: controlEnvelope('Schema', ['created', 'deleted'], {
      type: 'object', required: ['publicationVersion', 'journalId', 'entityNames'], properties: { publicationVersion: version(), journalId: str(), entityNames: names() },
    }),
    ControlSnapshot: {
      type: 'object', required: ['id', 'publicationVersion'],
      properties: {
        id: uuidSchema(), publicationVersion: version('The branch head when the snapshot was taken.'),
        entities: { type: 'array', items: schemaRef('ControlEntityDefinition'), description: 'On a read: the definitions, unchanged by later changes.' },
        createdAt: at(),
      },
    },
    ControlSnapshotSingle: controlSingle('SchemaSnapshot', ['created', 'read'], 'ControlSnapshot'),
    ControlSnapshotList: controlList('SchemaSnapshot', 'ControlSnapshot'),
  };
}

function transitionSchemas(): Json {
  return {
    ControlTransitionInput: {
      type: 'object', required: ['entityName', 'kind', 'field'],
      description: '`renameField { field, newName }`, `changeType { field, toType }`, `splitField { field, into, separator }`; another kind answers 422.',
      properties: {
        entityName: str(), kind: { type: 'string', enum: ['renameField', 'changeType', 'splitField'] }, field: str(),
        newName: str(), toType: str(), into: names(), separator: str(),
      },
    },
    ControlTransition: {
      type: 'object', required: ['id', 'state', 'phase', 'kind', 'entityName'],
      properties: {
        id: uuidSchema(), state: { type: 'string', enum: TRANSITION_STATES }, phase: str('`expand`, `backfill`, `contract`, …'),
        kind: str(), entityName: str(), branch: str(), backfilledRows: { type: 'integer', minimum: 0 }, error: str(), createdAt: at(), updatedAt: at(),
      },
    },
    ControlTransitionSingle: controlSingle('SchemaTransition', ['created', 'read', 'executing', 'rollingBack'], 'ControlTransition'),
    ControlTransitionList: controlList('SchemaTransition', 'ControlTransition'),
    ControlTransitionPreview: controlEnvelope('SchemaTransition', 'previewed', {
      type: 'object', required: ['kind', 'entityName', 'phases'],
      properties: { kind: str(), entityName: str(), phases: { type: 'array', items: { type: 'string', enum: ['expand', 'backfill', 'contract'] } } },
    }),
  };
}

export const schemaJournalSchemas = (): Json => ({ ...journalSchemas(), ...transitionSchemas() });

export function schemaJournalParameters(): Json {
  return {
    ControlJournalId: pathParam('id', 'Journal entry id.'),
    ControlJournalIdRollback: pathParam('journalId', 'Journal entry to revert (with every later applied one).'),
    ControlSnapshotId: pathParam('id', 'Snapshot id.'),
    ControlTransitionId: pathParam('id', 'Schema transition id.'),
  };
}

const op = (tag: string, o: Omit<StaticOp, 'tag' | 'auth'>): StaticOp => ({ ...o, tag, auth: 'admin' });
const S = 'Schema';
const T = 'SchemaTransitions';

export const SCHEMA_JOURNAL_OPS: StaticOp[] = [
  op(S, { method: 'get', path: '/Schema/journal', operationId: 'Schema.Journal.List', summary: 'The branch\'s schema journal, newest first', status: 200, response: 'ControlJournalList', errors: READ_ERRORS }),
  op(S, { method: 'get', path: '/Schema/journal/{id}', operationId: 'Schema.Journal.Read', summary: 'One journal entry', params: ['ControlJournalId'], status: 200, response: 'ControlJournalSingle', errors: READ_ERRORS }),
  op(S, { method: 'post', path: '/Schema/journal/{id}/recover', operationId: 'Schema.Journal.Recover', summary: 'Settle an entry a crash left unsettled', params: ['ControlJournalId'], status: 200, response: 'ControlJournalSingle', errors: [400, 401, 403, 404, 409, 422] }),
  op(S, { method: 'get', path: '/Schema/migration-history/{entityName}', operationId: 'Schema.MigrationHistory', summary: 'Journal entries touching one entity, oldest first', params: ['ControlEntityNamePath'], status: 200, response: 'ControlJournalList', errors: READ_ERRORS }),
  op(S, { method: 'post', path: '/Schema/migrate/apply', operationId: 'Schema.Migrate.Apply', summary: 'Apply several changes in one transaction, one publication, one journal entry (any failing change: nothing applied)', body: 'ControlMigrateInput', status: 200, response: 'ControlMigration', errors: WRITE_ERRORS }),
  op(S, { method: 'post', path: '/Schema/migrate/rollback/{journalId}', operationId: 'Schema.Migrate.Rollback', summary: 'Revert an entry and every later applied one of the branch (fields and entities they added are dropped with their data)', params: ['ControlJournalIdRollback'], status: 200, response: 'ControlMigration', errors: [400, 401, 403, 404, 409, 422] }),
  op(S, { method: 'post', path: '/Schema/entities/batch', operationId: 'Schema.Entities.Batch', summary: 'Create several entities in one publication', body: 'ControlBatchInput', status: 201, response: 'ControlBatchResult', errors: WRITE_ERRORS }),
  op(S, { method: 'post', path: '/Schema/entities/delete-batch', operationId: 'Schema.Entities.DeleteBatch', summary: 'Delete several entities in one publication', body: 'ControlDeleteBatchInput', status: 200, response: 'ControlBatchResult', errors: WRITE_ERRORS }),
  op(S, { method: 'delete', path: '/Schema/entities/batch', operationId: 'Schema.Entities.DeleteBatchAlias', summary: 'Delete several entities in one publication (same as `POST /Schema/entities/delete-batch`)', body: 'ControlDeleteBatchInput', status: 200, response: 'ControlBatchResult', errors: WRITE_ERRORS }),
  op(S, { method: 'post', path: '/Schema/snapshots', operationId: 'Schema.Snapshots.Create', summary: 'Snapshot the branch head\'s definitions', status: 201, response: 'ControlSnapshotSingle', errors: READ_ERRORS }),
  op(S, { method: 'get', path: '/Schema/snapshots', operationId: 'Schema.Snapshots.List', summary: 'Snapshots of the branch', status: 200, response: 'ControlSnapshotList', errors: READ_ERRORS }),
  op(S, { method: 'get', path: '/Schema/snapshots/{id}', operationId: 'Schema.Snapshots.Read', summary: 'A snapshot with its definitions', params: ['ControlSnapshotId'], status: 200, response: 'ControlSnapshotSingle', errors: READ_ERRORS }),
  op(T, { method: 'get', path: '/SchemaTransition', operationId: 'SchemaTransition.List', summary: 'Schema transitions of the branch', status: 200, response: 'ControlTransitionList', errors: READ_ERRORS }),
  op(T, { method: 'post', path: '/SchemaTransition', operationId: 'SchemaTransition.Create', summary: 'Register an online transition (`pending`)', body: 'ControlTransitionInput', status: 201, response: 'ControlTransitionSingle', errors: WRITE_ERRORS }),
  op(T, { method: 'post', path: '/SchemaTransition/preview', operationId: 'SchemaTransition.Preview', summary: 'The phases a transition would run (applies nothing)', body: 'ControlTransitionInput', status: 200, response: 'ControlTransitionPreview', errors: WRITE_ERRORS }),
  op(T, { method: 'get', path: '/SchemaTransition/{id}', operationId: 'SchemaTransition.Read', summary: 'A transition with its state and phase', params: ['ControlTransitionId'], status: 200, response: 'ControlTransitionSingle', errors: READ_ERRORS }),
  op(T, { method: 'post', path: '/SchemaTransition/{id}/execute', operationId: 'SchemaTransition.Execute', summary: 'Run expand → backfill → contract online (reads and writes keep being served)', params: ['ControlTransitionId'], status: 202, response: 'ControlTransitionSingle', errors: [400, 401, 403, 404, 409, 422] }),
  op(T, { method: 'post', path: '/SchemaTransition/{id}/rollback', operationId: 'SchemaTransition.Rollback', summary: 'Bring the old shape and values back (`rolledBack`)', params: ['ControlTransitionId'], status: 202, response: 'ControlTransitionSingle', errors: [400, 401, 403, 404, 409, 422] }),
];

export const SCHEMA_TRANSITION_TAG = { name: T, description: 'Online expand/backfill/contract changes of one field.' };
