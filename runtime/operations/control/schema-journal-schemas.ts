/**
 * Schemas of the schema journal, migration, snapshot and transition operations (CONTRACT
 * "Control plane" → "Schema journal and migrations", "Schema transitions"), referred to by their
 * contracts in schema-journal.ts and schema-transition.ts.
 *
 * The bodies declare only what ajv can refuse with the reason code and field the handlers
 * always answered (a missing or empty `changes` list: `Schema.InvalidBody` on `changes`); a body
 * that is not an object has no `type` refusal here, since the handlers answer it on the list's
 * field. What each entry holds stays the handlers' to check (their codes name the entry:
 * `Schema.InvalidChange` on `changes[2].action`, `Schema.InvalidEntityName` on `entityNames[0]`,
 * a definition's own problems), and is documented with `checkedByHandler`.
 */
import { schemaRef, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlEnvelope, controlList, controlSingle, str, version } from './control-schemas.js';
import { checkedByHandler } from './schema-entity-schemas.js';

/** Most changes one migration, batch or delete-batch takes (checked by the handlers: more is `Schema.TooManyChanges`). */
export const MAX_MIGRATION_CHANGES = 100;

const TRANSITION_STATES = ['pending', 'running', 'completed', 'failed', 'rolledBack'];
const names = (): Json => ({ type: 'array', items: { type: 'string' } });
const TOO_MANY = `At most ${MAX_MIGRATION_CHANGES} (more: 422 \`Schema.TooManyChanges\`).`;

export const SCHEMA_JOURNAL_SCHEMAS = defineSchemas({
  ControlJournalEntry: {
    type: 'object', required: ['id', 'publicationVersion', 'change', 'state', 'at'],
    properties: {
      id: uuidSchema(), publicationVersion: version('The publication the change made.'),
      change: {
        type: 'object', required: ['action'],
        description: 'One entity: `{ action: create|alter|delete, entityName, definition? }`; one handler: `{ action: addHandler|alterHandler|dropHandler, name, handler? }`; otherwise `{ action: migrate|merge|rollback|batch|transition, … }`.',
        properties: {
          action: { type: 'string', enum: ['create', 'alter', 'delete', 'addHandler', 'alterHandler', 'dropHandler', 'migrate', 'merge', 'rollback', 'batch', 'transition'] },
          entityName: str(), definition: schemaRef('ControlEntityDefinition'),
          name: str('Handler name (handler changes).'), handler: { type: 'object', description: 'The handler as declared (handler changes other than a drop).' },
        },
      },
      state: { type: 'string', enum: ['applied', 'rolledBack', 'failed'] },
      at: at(),
    },
  },
  ControlJournalSingle: controlSingle('SchemaJournal', ['read', 'recovered'], 'ControlJournalEntry'),
  ControlJournalList: controlList('SchemaJournal', 'ControlJournalEntry'),
  ControlMigrateChangeInput: checkedByHandler({
    oneOf: [
      { type: 'object', required: ['action', 'definition'], properties: { action: { type: 'string', enum: ['create', 'alter'] }, definition: schemaRef('ControlEntityDefinition') } },
      { type: 'object', required: ['action', 'entityName'], properties: { action: { type: 'string', const: 'delete' }, entityName: str() } },
    ],
  }, 'One change: `{ action: "create"|"alter", definition }` or `{ action: "delete", entityName }`.'),
  ControlMigrateInput: {
    required: ['changes'],
    properties: { changes: { type: 'array', minItems: 1, items: schemaRef('ControlMigrateChangeInput'), description: TOO_MANY } },
  },
  ControlMigration: controlEnvelope('Schema', ['migrated', 'rolledBack'], {
    type: 'object', required: ['publicationVersion', 'journalId'], properties: { publicationVersion: version(), journalId: str() },
  }),
  ControlBatchInput: {
    required: ['entities'],
    properties: { entities: { type: 'array', minItems: 1, items: schemaRef('ControlEntityDefinitionInput'), description: TOO_MANY } },
  },
  ControlDeleteBatchInput: {
    required: ['entityNames'],
    properties: {
      entityNames: {
        type: 'array', minItems: 1, description: TOO_MANY,
        items: { description: 'An entity name: a string (else 422 `Schema.InvalidEntityName` on `entityNames[<i>]`).' },
      },
    },
  },
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
});

/**
 * Only `kind` and `entityName`'s type are refused here: the handler (runtime/control/transition-plan.ts)
 * checks them first, then looks the entity up (404 `Schema.EntityNotFound`) before it reads the other
 * fields, so a refusal of those by ajv would turn that 404 into a 422. They are documented, not enforced.
 */
const handlerChecked = (description: string): Json => ({ description });

export const SCHEMA_TRANSITION_SCHEMAS = defineSchemas({
  ControlTransitionInput: {
    type: 'object', required: ['kind'],
    description: '`renameField { field, newName }`, `changeType { field, toType }`, `splitField { field, into, separator }`; another kind answers 422.',
    properties: {
      kind: { type: 'string', enum: ['renameField', 'changeType', 'splitField'] },
      entityName: { type: 'string', minLength: 1, description: 'Required.' },
      field: handlerChecked('A field of the entity (string, required).'),
      newName: handlerChecked('renameField: the new name (string).'),
      toType: handlerChecked('changeType: a field type.'),
      into: handlerChecked('splitField: 2 to 8 new field names (strings).'),
      separator: handlerChecked('splitField: the separator (non-empty string).'),
      batchRows: handlerChecked('Create only: rows per backfill batch, an integer in 1..10000.'),
      pauseMs: handlerChecked('Create only: pause between backfill batches, an integer in 0..10000 ms.'),
    },
  },
  ControlTransition: {
    type: 'object', required: ['id', 'state', 'phase', 'kind', 'entityName'],
    description: 'The transition with its body\'s own fields (`field`, and `newName`, `toType` or `into` and `separator`).',
    properties: {
      id: uuidSchema(), state: { type: 'string', enum: TRANSITION_STATES },
      phase: { type: ['string', 'null'], description: '`expand`, `backfill`, `contract`, …; null while `pending`.' },
      kind: str(), entityName: str(), field: str(), newName: str(), toType: str(), into: names(), separator: str(),
      branch: str(), backfilledRows: { type: 'integer', minimum: 0 }, error: str(), createdAt: at(), updatedAt: at(),
    },
  },
  ControlTransitionSingle: controlSingle('SchemaTransition', ['created', 'read', 'executing', 'rollingBack'], 'ControlTransition'),
  ControlTransitionList: controlList('SchemaTransition', 'ControlTransition'),
  ControlTransitionPreview: controlEnvelope('SchemaTransition', 'previewed', {
    type: 'object', required: ['kind', 'entityName', 'phases'],
    properties: { kind: str(), entityName: str(), phases: { type: 'array', items: { type: 'string', enum: ['expand', 'backfill', 'contract'] } } },
  }),
});
