/**
 * Schema pieces the control-plane operations' contracts share (issue 14; CONTRACT
 * "Control plane"): the control-plane envelope `{ surface, state, correlationId, data }`,
 * the entity definition the schema routes take and return, the proposal/deployment diff
 * vocabulary, and the error lists of admin routes. Schema names carry a `Control` prefix so
 * they never take a name an entity of the project could want.
 */
import { dateTimeSchema, schemaRef, type Json } from '../../publication/openapi-components.js';
import { FIELD_TYPES } from '../../publication/model.js';
import { defineSchemas } from '../contract/index.js';

/** `{ surface, state, correlationId, data }`: every control-plane answer (CONTRACT "Common"). */
export function controlEnvelope(surface: string, states: string | string[], data: Json): Json {
  const list = Array.isArray(states) ? states : [states];
  return {
    type: 'object',
    required: ['surface', 'state', 'correlationId', 'data'],
    properties: {
      surface: { type: 'string', const: surface },
      state: list.length === 1 ? { type: 'string', const: list[0] } : { type: 'string', enum: list },
      correlationId: { type: 'string', description: 'Same value as the `X-Service-Correlation-Id` header.' },
      data,
    },
  };
}

/** The envelope around one record and around a list of them. */
export const controlSingle = (surface: string, states: string | string[], record: string): Json => controlEnvelope(surface, states, schemaRef(record));
export const controlList = (surface: string, record: string): Json => controlEnvelope(surface, 'listed', { type: 'array', items: schemaRef(record) });

export const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
export const int = (description?: string, minimum = 0): Json => ({ type: 'integer', minimum, ...(description === undefined ? {} : { description }) });
export const version = (description = 'A publication version of the project (one counter per project).'): Json => ({ type: 'integer', minimum: 0, description });
export const pathParam = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({ name, in: 'path', required: true, description, schema });
export const queryParam = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({ name, in: 'query', required: false, description, schema });

/** Branch names (CONTRACT "Branches"): also what `X-Service-Branch` takes. */
export const BRANCH_NAME_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';
export const branchName = (description?: string): Json => ({ type: 'string', pattern: BRANCH_NAME_PATTERN, ...(description === undefined ? {} : { description }) });

/** Named schemas every control-plane family refers to. */
export const CONTROL_COMMON_SCHEMAS = defineSchemas({
  ControlFieldDefinition: {
    type: 'object', required: ['name', 'type'],
    properties: {
      name: { type: 'string', pattern: '^[a-z][A-Za-z0-9]{0,62}$' },
      type: { type: 'string', enum: [...FIELD_TYPES] },
      nullable: { type: 'boolean', description: 'Default false.' },
      unique: { type: 'boolean' },
      default: { description: 'Default value (type of the field), or null.' },
      values: { type: 'array', items: { type: 'string' }, description: 'Values of an `Enum` field.' },
      references: { type: ['string', 'null'], description: 'Entity an `ID` field references.' },
    },
  },
  ControlEntityDefinition: {
    type: 'object', required: ['entityName', 'fields'],
    description: 'An entity definition as `/Schema/entities` takes it: the full list of fields (an alter replaces the definition).',
    properties: {
      entityName: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]{0,62}$' },
      fields: { type: 'array', items: schemaRef('ControlFieldDefinition') },
      softDelete: { type: 'boolean' },
    },
  },
  ControlFieldChange: {
    type: 'object', required: ['op', 'field'],
    properties: { op: { type: 'string', enum: ['addField', 'dropField', 'alterField'] }, field: str('Field name.') },
  },
  ControlDiffEntry: {
    type: 'object', required: ['op'],
    description: 'One differing entity (proposal `diff`, deployment plan `migrations`), with `entityName`; an add or alter names the fields it changes. Or one differing handler, with `name`.',
    properties: {
      op: { type: 'string', enum: ['addEntity', 'alterEntity', 'dropEntity', 'addHandler', 'alterHandler', 'dropHandler'] },
      entityName: str(),
      name: str('Handler name (handler entries).'),
      fields: { type: 'array', items: schemaRef('ControlFieldChange') },
    },
  },
  ControlEmpty: { type: 'object', description: 'An empty JSON object (or no body).' },
});

export const at = (): Json => ({ ...dateTimeSchema(), description: 'ISO 8601 UTC.' });
