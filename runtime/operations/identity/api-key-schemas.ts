/**
 * Schemas of project API key management (`/projects/{projectId}/api-keys`),
 * referred to by the contracts in api-keys.ts. No answer carries the secret:
 * it comes once from `/CredentialReveal/{revealTokenId}/reveal` (docs/identity.md, "API keys").
 */
import { dateTimeSchema, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';
import { GRANT_RE } from './grant-patterns.js';
import { controlOf } from './identity-schemas.js';

export const GRANT_PATTERN = GRANT_RE.source;
export const grantString = (): Json => ({ type: 'string', pattern: GRANT_PATTERN, description: '`entity:<Entity|*>:<read|insert|update|delete|*>` or `branch:<name|*>:approve`.' });
const filterObject = (description: string): Json => ({ type: 'object', description });

export const API_KEY_SCHEMAS = defineSchemas({
  ApiKeyGrant: {
    description: 'A grant string, or the grant with row-policy parts (docs/authorization.md).',
    // The object form first: of a malformed object, its own problem (`grants[0].rowFilter`) is the one reported.
    oneOf: [
      {
        type: 'object', required: ['grant'], additionalProperties: false,
        properties: {
          grant: grantString(),
          rowFilter: filterObject('Row filter the key\'s reads are limited to (filter language of list routes).'),
          check: filterObject('Condition written rows must satisfy.'),
          // Entries are checked by the operation (api-keys.ts), whose 422 names `grants[i].fields`, not the entry.
          fields: { type: 'array', maxItems: 500, items: { description: 'A field name (1 to 128 characters).' }, description: 'Fields the grant covers.' },
        },
      },
      grantString(),
    ],
  },
  ApiKeyInput: {
    type: 'object', required: ['name', 'grants'], additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '\\S', maxLength: 200, description: 'Not blank; at most 200 characters.' },
      // A bad entry answers 422 `ApiKey.InvalidGrant` naming it (`grants[1]`, `grants[0].grant`), the array's own problems `ApiKey.InvalidProperty`.
      grants: { type: 'array', maxItems: 100, items: ref('ApiKeyGrant'), description: 'Exactly what the key may do (no role grants apply to it); at most 64 KiB as JSON.' },
      scopes: {
        type: ['array', 'null'], maxItems: 50, description: 'Stored as given (MCP scopes).',
        // Checked by the operation, so a bad entry answers `field: "scopes"` as before.
        items: { description: 'A non-empty string of at most 200 characters.' },
      },
    },
  },
  ApiKey: {
    type: 'object', required: ['id', 'projectId', 'name', 'keyPrefix', 'grants', 'scopes', 'createdAt'],
    properties: {
      id: uuidSchema(),
      projectId: uuidSchema(),
      name: { type: 'string' },
      keyPrefix: { type: 'string', pattern: '^plk_[0-9a-f]{32}$', description: 'The non-secret start of the key (`plk_<id>`), to match a leaked key to its record.' },
      grants: { type: 'array', items: ref('ApiKeyGrant') },
      scopes: { type: ['array', 'null'], items: { type: 'string' } },
      createdAt: dateTimeSchema(),
    },
  },
  ApiKeyCreated: {
    allOf: [ref('ApiKey'), {
      type: 'object', required: ['revealTokenId'],
      properties: { revealTokenId: { ...uuidSchema(), description: '`POST /CredentialReveal/{revealTokenId}/reveal` returns the key (`plk_…`) once (expires after 15 minutes unread).' } },
    }],
  },
  ApiKeySingle: controlOf('ApiKey', 'active', ref('ApiKeyCreated')),
  ApiKeyList: controlOf('ApiKey', 'listed', { type: 'array', items: ref('ApiKey') }),
});
