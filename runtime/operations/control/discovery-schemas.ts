/**
 * Schemas of the discovery operations (spec "Discovery"; docs/versioning-and-records.md):
 * the scoped project's contract projection (`/ContractProjection/descriptor`, `/cli`) and
 * introspected surface, documents with an `ETag` (not in the control-plane envelope); and the
 * platform's admin surface, dev bootstrap descriptor and execution capability matrix.
 * Referred to by the contracts in contract-projection.ts and introspection.ts.
 */
import { schemaRef } from '../../publication/openapi-components.js';
import { defineSchemas, type Json } from '../contract/index.js';
import { controlEnvelope, str, version } from './control-schemas.js';

const list = (description: string): Json => ({ type: 'array', items: { type: 'object' }, description });
const endpoints = (): Json => ({ type: 'object', description: 'Where each protocol answers: `rest`, `graphql`, `realtime`, `mcp`, `grpc`.' });

export const DISCOVERY_SCHEMAS = defineSchemas({
  DiscoveryContractDescriptor: {
    type: 'object', required: ['descriptorVersion', 'tenant', 'project', 'branch', 'publicationVersion', 'descriptorHash', 'endpoints', 'entities', 'operations', 'bindings'],
    properties: {
      descriptorVersion: { type: 'integer', const: 1 }, tenant: str(), project: str(), branch: str(), publicationVersion: version(), descriptorHash: str(), endpoints: endpoints(),
      entities: list('Entities with their fields.'), operations: list('Operations with method, path, success status, required grants, bindings.'), bindings: list('Exposure bindings.'),
    },
  },
  DiscoveryCliDescriptor: {
    type: 'object', required: ['cliDescriptorVersion', 'tenant', 'project', 'branch', 'publicationVersion', 'basePath', 'headers', 'commands'],
    properties: {
      cliDescriptorVersion: { type: 'integer', const: 2 }, tenant: str(), project: str(), branch: str(), publicationVersion: version(), basePath: str(),
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      commands: { type: 'array', items: schemaRef('DiscoveryCliCommand'), description: 'A command per entity operation (`customers list`, …) and per declared platform operation (`branch create`, …).' },
    },
  },
  DiscoveryCliCommand: {
    type: 'object', required: ['name', 'summary', 'operationId', 'method', 'path', 'args', 'flags', 'body', 'authn'], additionalProperties: false,
    properties: {
      name: str(), summary: str(), operationId: str(), method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
      path: { type: 'string', description: 'With the base path and `{name}` for each argument.' },
      args: { type: 'array', items: { type: 'object', required: ['name', 'required'], additionalProperties: false, properties: { name: str(), required: { type: 'boolean' } } } },
      flags: {
        type: 'array',
        items: { type: 'object', required: ['name', 'type', 'required'], additionalProperties: false, properties: { name: str(), type: str('JSON type of the value, or `json` for a JSON document.'), required: { type: 'boolean' } } },
      },
      body: { type: 'boolean', description: 'Whether the command sends a body (`--data` or the flags).' },
      authn: { type: 'string', enum: ['public', 'user', 'admin'] },
      requiredGrants: { type: 'array', items: { type: 'string' }, description: 'Grants an entity command needs.' },
    },
  },
  DiscoveryIntrospectionSurface: {
    type: 'object', required: ['publicationVersion', 'descriptorHash', 'endpoints', 'entities', 'protocols', 'operationCount', 'bindingCount'],
    properties: {
      publicationVersion: version(), descriptorHash: str(), endpoints: endpoints(), entities: list('Entities with their operation ids.'),
      protocols: { type: 'array', items: { type: 'string' } }, operationCount: { type: 'integer', minimum: 0 }, bindingCount: { type: 'integer', minimum: 0 },
    },
  },
  DiscoveryAdminSurface: controlEnvelope('AdminSurface', 'read', {
    type: 'object', required: ['platformVersion', 'apiVersions', 'families'],
    properties: { platformVersion: str(), apiVersions: { type: 'array', items: { type: 'string' } }, families: list('Admin route families with their routes (method, path, operationId).') },
  }),
  DiscoveryDevBootstrap: controlEnvelope('DevBootstrapDescriptor', 'read', {
    type: 'object', required: ['platformVersion', 'mode', 'auth', 'scopeHeaders', 'steps', 'discovery'],
    properties: {
      platformVersion: str(), mode: str(), auth: { type: 'object' }, scopeHeaders: { type: 'array', items: { type: 'string' } },
      steps: list('The first calls of a new project, in order.'), discovery: { type: 'array', items: { type: 'string' } },
    },
  }),
  DiscoveryCapabilityMatrix: controlEnvelope('ExecutionCapabilityMatrix', 'read', {
    type: 'object', required: ['platformVersion', 'platformSchemaVersion', 'mode', 'protocols', 'capabilities', 'matrix'],
    properties: {
      platformVersion: str(), platformSchemaVersion: { type: 'integer' }, mode: str(), protocols: { type: 'array', items: { type: 'string' } }, capabilities: { type: 'array', items: { type: 'string' } },
      matrix: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'boolean' } }, description: 'Protocol → capability → executed in this build.' },
    },
  }),
});
