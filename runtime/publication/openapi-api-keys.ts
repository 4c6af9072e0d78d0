/**
 * Project API key management (`/projects/{projectId}/api-keys`), platform
 * admin only, project from the path. Registered by openapi-static.ts. No
 * response schema carries the secret: it comes once from
 * `/CredentialReveal/{revealTokenId}/reveal` (docs/identity.md, "API keys").
 */
import { dateTimeSchema, schemaRef, uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';

export const API_KEY_SCHEMA_NAMES = ['ApiKeyGrant', 'ApiKeyInput', 'ApiKey', 'ApiKeyCreated', 'ApiKeySingle', 'ApiKeyList'] as const;

const GRANT_PATTERN = '^entity:(\\*|[A-Z][A-Za-z0-9]{0,62}):(read|insert|update|delete|\\*)$';
const grantString = (): Json => ({ type: 'string', pattern: GRANT_PATTERN, description: '`entity:<Entity|*>:<read|insert|update|delete|*>`.' });
const filterObject = (description: string): Json => ({ type: 'object', description });

/** The control-plane envelope (`{ surface, state, correlationId, data }`). */
const controlEnvelope = (data: Json, state: string): Json => ({
  type: 'object',
  required: ['surface', 'state', 'correlationId', 'data'],
  properties: { surface: { type: 'string', const: 'ApiKey' }, state: { type: 'string', const: state }, correlationId: { type: 'string' }, data },
});

export function apiKeySchemas(): Json {
  return {
    ApiKeyGrant: {
      description: 'A grant string, or the grant with row-policy parts (recorded as given; enforced once row policy lands).',
      oneOf: [
        grantString(),
        {
          type: 'object', required: ['grant'], additionalProperties: false,
          properties: {
            grant: grantString(),
            rowFilter: filterObject('Row filter the key\'s reads are limited to (filter language of list routes).'),
            check: filterObject('Condition written rows must satisfy.'),
            fields: { type: 'array', items: { type: 'string' }, description: 'Fields the grant covers.' },
          },
        },
      ],
    },
    ApiKeyInput: {
      type: 'object', required: ['name', 'grants'], additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        grants: { type: 'array', maxItems: 100, items: schemaRef('ApiKeyGrant'), description: 'Exactly what the key may do (no role grants apply to it).' },
        scopes: { type: ['array', 'null'], maxItems: 50, items: { type: 'string' }, description: 'Stored as given (MCP scopes).' },
      },
    },
    ApiKey: {
      type: 'object', required: ['id', 'projectId', 'name', 'keyPrefix', 'grants', 'scopes', 'createdAt'],
      properties: {
        id: uuidSchema(),
        projectId: uuidSchema(),
        name: { type: 'string' },
        keyPrefix: { type: 'string', pattern: '^plk_[0-9a-f]{32}$', description: 'The non-secret start of the key (`plk_<id>`), to match a leaked key to its record.' },
        grants: { type: 'array', items: schemaRef('ApiKeyGrant') },
        scopes: { type: ['array', 'null'], items: { type: 'string' } },
        createdAt: dateTimeSchema(),
      },
    },
    ApiKeyCreated: {
      allOf: [schemaRef('ApiKey'), {
        type: 'object', required: ['revealTokenId'],
        properties: { revealTokenId: { ...uuidSchema(), description: '`POST /CredentialReveal/{revealTokenId}/reveal` returns the key (`plk_…`) once (expires after 15 minutes unread).' } },
      }],
    },
    ApiKeySingle: controlEnvelope(schemaRef('ApiKeyCreated'), 'active'),
    ApiKeyList: controlEnvelope({ type: 'array', items: schemaRef('ApiKey') }, 'listed'),
  };
}

export function apiKeyParameters(): Json {
  return {
    PathProjectId: { name: 'projectId', in: 'path', required: true, description: 'Project id.', schema: uuidSchema() },
    ApiKeyId: { name: 'id', in: 'path', required: true, description: 'API key id.', schema: uuidSchema() },
  };
}

const TAG = 'Identity';
const base = '/projects/{projectId}/api-keys';

export const API_KEY_OPS: StaticOp[] = [
  { method: 'get', path: base, operationId: 'Projects.ApiKeys.List', tag: TAG, auth: 'admin', unscoped: true, summary: 'List the project\'s API keys (never their secrets)', params: ['PathProjectId'], status: 200, response: 'ApiKeyList', errors: [401, 403, 404] },
  {
    method: 'post', path: base, operationId: 'Projects.ApiKeys.Create', tag: TAG, auth: 'admin', unscoped: true,
    summary: 'Create an API key (one-time reveal via `revealTokenId`)',
    description: 'The key is sent as `Authorization: Bearer plk_…` with the project\'s scope headers and acts with exactly its grants, on this project only.',
    params: ['PathProjectId'], body: 'ApiKeyInput', status: 201, response: 'ApiKeySingle', errors: [401, 403, 404, 413, 422],
  },
  { method: 'delete', path: `${base}/{id}`, operationId: 'Projects.ApiKeys.Delete', tag: TAG, auth: 'admin', unscoped: true, summary: 'Delete an API key: refused from its next request on, on every node', params: ['PathProjectId', 'ApiKeyId'], status: 204, errors: [401, 403, 404] },
];
