/**
 * The discovery routes (spec "Discovery"; docs/versioning-and-records.md): the scoped
 * project's contract projection (`/ContractProjection/descriptor`, `/cli`) and introspected
 * surface, documents with an `ETag` (not in the control-plane envelope), open to any
 * credential of the project; and the platform's admin surface, dev bootstrap descriptor and
 * execution capability matrix (admin, no scope). Registered by openapi-control-plane.ts.
 */
import { type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { controlEnvelope, str, version } from './openapi-control-common.js';

export const DISCOVERY_SCHEMA_NAMES = [
  'DiscoveryContractDescriptor', 'DiscoveryCliDescriptor', 'DiscoveryIntrospectionSurface', 'DiscoveryAdminSurface', 'DiscoveryDevBootstrap', 'DiscoveryCapabilityMatrix',
] as const;

const list = (description: string): Json => ({ type: 'array', items: { type: 'object' }, description });
const endpoints = (): Json => ({ type: 'object', description: 'Where each protocol answers: `rest`, `graphql`, `realtime`, `mcp`, `grpc`.' });

export function discoverySchemas(): Json {
  return {
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
        cliDescriptorVersion: { type: 'integer', const: 1 }, tenant: str(), project: str(), branch: str(), publicationVersion: version(), basePath: str(),
        headers: { type: 'object', additionalProperties: { type: 'string' } }, commands: list('A CLI verb per entity operation (`customers list`, …).'),
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
  };
}

const TAG = 'Discovery';
const DOCUMENT = 'A document of the serving publication with an `ETag`; `If-None-Match` with it answers 304.';

export const DISCOVERY_OPS: StaticOp[] = [
  { method: 'get', path: '/ContractProjection/descriptor', operationId: 'Discovery.ContractProjection.Descriptor', tag: TAG, summary: 'What the project\'s publication exposes: entities, operations, bindings, endpoints', description: DOCUMENT, conditional: true, status: 200, response: 'DiscoveryContractDescriptor', errors: [400, 401, 404] },
  { method: 'get', path: '/ContractProjection/cli', operationId: 'Discovery.ContractProjection.Cli', tag: TAG, summary: 'A CLI descriptor: one command per entity operation', description: DOCUMENT, conditional: true, status: 200, response: 'DiscoveryCliDescriptor', errors: [400, 401, 404] },
  { method: 'get', path: '/Introspection/surface', operationId: 'Discovery.Introspection.Surface', tag: TAG, summary: 'The project\'s surface: endpoints, entities and their operations, protocols', description: DOCUMENT, conditional: true, status: 200, response: 'DiscoveryIntrospectionSurface', errors: [400, 401, 404] },
  { method: 'get', path: '/Platform/admin-surface', operationId: 'Discovery.Platform.AdminSurface', tag: TAG, auth: 'admin', unscoped: true, summary: 'Route families the platform admin acts through', status: 200, response: 'DiscoveryAdminSurface', errors: [401, 403] },
  { method: 'get', path: '/DevBootstrapDescriptor/descriptor', operationId: 'Discovery.DevBootstrapDescriptor.Descriptor', tag: TAG, auth: 'admin', unscoped: true, summary: 'How to bootstrap a project on this node, step by step', status: 200, response: 'DiscoveryDevBootstrap', errors: [401, 403] },
  { method: 'get', path: '/ExecutionCapabilityMatrix/matrix', operationId: 'Discovery.ExecutionCapabilityMatrix.Matrix', tag: TAG, auth: 'admin', unscoped: true, summary: 'Which protocol executes which entity capability in this build', status: 200, response: 'DiscoveryCapabilityMatrix', errors: [401, 403] },
];

export const DISCOVERY_TAG = { name: TAG, description: 'Descriptors of the project\'s contract and of the platform.' };
