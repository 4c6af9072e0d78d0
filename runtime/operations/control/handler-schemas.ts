/**
 * Schemas of the handler declaration routes (CONTRACT "Authored code" → "Handlers"; docs/authored-code.md),
 * referred to by their contracts in handlers.ts. The body schema refuses what ajv can refuse with the
 * reason codes the handler would answer; what needs the model or the source (an operation's entity, a
 * name already taken, a compile error) and an operation schema's vocabulary are the handler's to check.
 */
import { ASSET_PATH_PATTERN, MAX_PATH_LENGTH } from '../../source-assets/paths.js';
import { EXPORT_PATTERN, HANDLER_NAME_PATTERN, LIMIT_CEILING, MAX_HANDLER_GRANTS } from '../../authored/declaration.js';
import { HANDLER_SURFACES } from '../../authored/types.js';
import type { Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { controlList, controlSingle, str, version } from './control-schemas.js';

const name = (description: string): Json => ({ type: 'string', pattern: HANDLER_NAME_PATTERN, description });
const limit = (key: keyof typeof LIMIT_CEILING, description: string): Json => ({ type: 'integer', minimum: 1, maximum: LIMIT_CEILING[key], description });
const LIMITS: Json = {
  type: 'object', additionalProperties: false,
  description: 'Per invocation. Missing values are the surface\'s defaults (CoreHandler, ManagementHandler 1000/10000/64; background surfaces 10000/60000/128; EdgeHandler 50/5000/64, fixed); a governance envelope\'s `maxHandlerLimits` caps them.',
  properties: { cpuMs: limit('cpuMs', 'CPU milliseconds.'), wallMs: limit('wallMs', 'Wall-clock milliseconds.'), memoryMiB: limit('memoryMiB', 'Heap cap of the sandbox, MiB.') },
};
const OPERATION_SCHEMA: Json = {
  type: 'object',
  description: 'A JSON Schema (draft 2020-12) of the keywords `type`, `properties`, `required`, `enum`, `items`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern` (and `description`, `additionalProperties`); anything else → 422 `Handler.InvalidOperationSchema`.',
};
const OPERATION: Json = {
  type: 'object', required: ['input'], additionalProperties: false,
  description: 'CoreHandler, EdgeHandler and ManagementHandler only. With `entity`: `POST /api/{collection}/{id}/{name}`; without: `POST /api/operations/{name}`.',
  properties: {
    name: name('Default: the handler\'s name. Unique among the publication\'s operations (else 409 `Handler.OperationExists`).'),
    entity: str('An entity of the branch (else 422 `Handler.UnknownEntity`).'),
    input: OPERATION_SCHEMA,
    output: OPERATION_SCHEMA,
  },
};

const body = (nameRequired: boolean): Json => ({
  type: 'object', additionalProperties: false,
  required: nameRequired ? ['name', 'surface', 'source'] : ['surface', 'source'],
  properties: {
    name: name(nameRequired ? 'The handler\'s name, unique on the branch (else 409 `Handler.Exists`).' : 'Optional; when given it must be the path\'s `{name}`.'),
    surface: { type: 'string', enum: [...HANDLER_SURFACES], description: 'The execution surface.' },
    source: { type: 'string', pattern: ASSET_PATH_PATTERN, maxLength: MAX_PATH_LENGTH, description: 'The entry source asset (`.ts`, `.js` or `.mjs`) on the branch; compiled and pinned now.' },
    export: { type: 'string', pattern: EXPORT_PATTERN, description: 'The export that is the handler. Default: `default`.' },
    grants: {
      type: 'array', maxItems: MAX_HANDLER_GRANTS,
      items: { type: 'string', description: 'A capability grant string: `entity:<Entity|*>:<read|insert|update|delete|*>`.' },
      description: 'What a background handler holds when it runs as the project\'s service profile.',
    },
    limits: LIMITS,
    operation: OPERATION,
    workflow: { type: 'object', description: 'DurableWorkflow only: the workflow\'s declaration.' },
  },
});

export const HANDLER_SCHEMAS = defineSchemas({
  ControlHandler: {
    type: 'object', required: ['name', 'surface', 'source', 'sha256', 'export', 'grants', 'limits', 'publicationVersion'], additionalProperties: false,
    properties: {
      name: name('Handler name.'),
      surface: { type: 'string', enum: [...HANDLER_SURFACES] },
      source: str('The entry source asset.'),
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Hex digest of the source\'s bytes when declared or last `PUT`: what is served until the next `PUT`.' },
      export: str(),
      grants: { type: 'array', items: str() },
      limits: { ...LIMITS, required: ['cpuMs', 'wallMs', 'memoryMiB'], description: 'With the surface\'s defaults filled in.' },
      operation: {
        type: 'object', required: ['name', 'input'],
        properties: { name: str(), entity: str(), input: { type: 'object' }, output: { type: 'object' } },
      },
      publicationVersion: version('The publication this record was read from (after a write: the one it made).'),
    },
  },
  ControlHandlerInput: body(true),
  ControlHandlerPutInput: body(false),
  ControlHandlerSingle: controlSingle('Handler', ['created', 'updated', 'read'], 'ControlHandler'),
  ControlHandlerList: controlList('Handler', 'ControlHandler'),
});
