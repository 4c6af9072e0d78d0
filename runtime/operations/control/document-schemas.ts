/**
 * The discovery documents' tag and the one of them that is JSON (the OpenAPI
 * document); the SDL, the proto file and the YAML form are text, declared by
 * their media type where they are served.
 */
import { defineSchemas, type TagDecl } from '../contract/index.js';

/** The `Discovery` tag: the OpenAPI documents here, the contract projection and introspection (contract-projection.ts, introspection.ts). */
export const DISCOVERY_TAG: TagDecl = { name: 'Discovery', description: 'Descriptors of the project\'s contract and of the platform.' };

export const DOCUMENT_SCHEMAS = defineSchemas({
  PlatformOpenApiDocument: {
    type: 'object', required: ['openapi', 'info', 'servers', 'paths', 'components'],
    description: 'An OpenAPI 3.1 document: the entity routes of the serving publication and the platform\'s routes, under the base it was asked at (`/api` or `/v1`).',
    properties: {
      openapi: { type: 'string', const: '3.1.0' },
      info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string', description: '`publication-<version>`.' }, description: { type: 'string' } } },
      servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } } },
      'x-publication-version': { type: 'integer', minimum: 0 },
      tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, description: { type: 'string' } } } },
      security: { type: 'array', items: { type: 'object' } },
      paths: { type: 'object', additionalProperties: { type: 'object' } },
      components: { type: 'object' },
    },
  },
});
