import { PROTOCOLS, API_VERSIONS, PLATFORM_SCHEMA_VERSION, PLATFORM_VERSION } from '../../versioning/platform.js';
import { capabilityMatrix, ENTITY_CAPABILITIES } from '../../publication/capabilities.js';
import { control } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import { discoveryOp, DOCUMENT_CONTRACT, endpointsOf } from './contract-projection.js';
import { DISCOVERY_SCHEMAS as DS } from './discovery-schemas.js';
import { conditional, tagged } from './etag.js';
import type { FamilyContract } from './records-family-op.js';

/** Platform admin, no scope: documents of the platform, not of a project. */
const admin = (id: string, contract: FamilyContract, execute: DeclaredSpec['execute']): DeclaredSpec => discoveryOp(id, { scope: 'none' }, { errors: [401, 403], ...contract }, execute);

/** Route families the platform admin acts through, from the REST route table. */
function adminFamilies(ctx: OperationContext): Array<{ family: string; routes: Array<{ method: string; path: string; operationId: string }> }> {
  const basePath = ctx.inv.basePath === '/v1' ? '/v1' : '/api';
  const families = new Map<string, Array<{ method: string; path: string; operationId: string }>>();
  for (const r of ctx.services.routes?.list?.() ?? []) {
    if (r.authn !== 'admin') continue;
    const family = r.path.split('/')[0]!;
    families.set(family, [...(families.get(family) ?? []), { method: r.method, path: `${basePath}/${r.path.replace(/:(\w+)/g, '{$1}')}`, operationId: r.operationId }]);
  }
  return [...families].map(([family, routes]) => ({ family, routes }));
}

export const INTROSPECTION_SPECS = {
  /** `GET /api/Introspection/surface`: the scoped project's surface, a document with an ETag like the contract projection. */
  surface: discoveryOp('Discovery.Introspection.Surface', { authn: 'user', scope: 'project', requestHeaders: ['if-none-match'] }, {
    summary: 'The project\'s surface: endpoints, entities and their operations, protocols', routes: [{ method: 'GET', path: 'Introspection/surface' }],
    ...DOCUMENT_CONTRACT, output: { status: 200, body: DS.DiscoveryIntrospectionSurface, conditional: true },
  }, async (ctx) => {
    const pub = ctx.scope!.publication;
    const basePath = ctx.inv.basePath === '/v1' ? '/v1' : '/api';
    return conditional(ctx, pub.derive(`introspection-surface${basePath}`, () => tagged({
      publicationVersion: pub.version,
      descriptorHash: pub.record.descriptorHash,
      endpoints: endpointsOf(ctx, basePath),
      entities: [...pub.entities.values()].map((e) => ({
        entityName: e.entityName, collection: e.collection,
        operations: [...pub.operations.values()].filter((o) => o.entity === e.entityName).map((o) => o.operationId),
      })),
      protocols: [...new Set(pub.bindings.map((b) => b.bindingId.split(':')[0]!))],
      operationCount: pub.operations.size,
      bindingCount: pub.bindings.length,
    })));
  }),
  adminSurface: admin('Discovery.Platform.AdminSurface', {
    summary: 'Route families the platform admin acts through', routes: [{ method: 'GET', path: 'Platform/admin-surface' }],
    output: { status: 200, body: DS.DiscoveryAdminSurface },
  }, async (ctx) => control(ctx, 'AdminSurface', 'read', {
    platformVersion: PLATFORM_VERSION, apiVersions: [...API_VERSIONS], families: adminFamilies(ctx),
  })),
  devBootstrap: admin('Discovery.DevBootstrapDescriptor.Descriptor', {
    summary: 'How to bootstrap a project on this node, step by step', routes: [{ method: 'GET', path: 'DevBootstrapDescriptor/descriptor' }],
    output: { status: 200, body: DS.DiscoveryDevBootstrap },
  }, async (ctx) => {
    const basePath = ctx.inv.basePath === '/v1' ? '/v1' : '/api';
    return control(ctx, 'DevBootstrapDescriptor', 'read', {
      platformVersion: PLATFORM_VERSION,
      mode: ctx.services.node.mode,
      auth: { adminToken: 'SERVICE_ADMIN_TOKEN, or the token generated into DATA_DIR at first start', header: 'Authorization: Bearer <token>' },
      scopeHeaders: ['X-Service-Tenant', 'X-Service-Project', 'X-Service-Branch'],
      steps: [
        { step: 1, method: 'POST', path: `${basePath}/TenantRecord`, body: { slug: '<tenant-slug>', name: '<name>' }, status: 201 },
        { step: 2, method: 'POST', path: `${basePath}/projects/create`, body: { tenant: '<tenant-slug>', slug: '<project-slug>', name: '<name>' }, status: 201 },
        { step: 3, method: 'POST', path: `${basePath}/Schema/entities`, headers: ['X-Service-Tenant', 'X-Service-Project'], body: { entityName: '<Entity>', fields: [] }, status: 201 },
        { step: 4, method: 'POST', path: `${basePath}/identity/register`, headers: ['X-Service-Tenant', 'X-Service-Project'], body: { email: '<email>', password: '<password>' }, status: 201 },
      ],
      discovery: [`${basePath}/openapi.json`, `${basePath}/ContractProjection/descriptor`, `${basePath}/ContractProjection/cli`, '/graphql/schema'],
    });
  }),
  capabilityMatrix: admin('Discovery.ExecutionCapabilityMatrix.Matrix', {
    summary: 'Which protocol executes which entity capability in this build', routes: [{ method: 'GET', path: 'ExecutionCapabilityMatrix/matrix' }],
    output: { status: 200, body: DS.DiscoveryCapabilityMatrix },
  }, async (ctx) => control(ctx, 'ExecutionCapabilityMatrix', 'read', {
    platformVersion: PLATFORM_VERSION, platformSchemaVersion: PLATFORM_SCHEMA_VERSION, mode: ctx.services.node.mode,
    protocols: [...PROTOCOLS], capabilities: [...ENTITY_CAPABILITIES], matrix: capabilityMatrix(),
  })),
};
