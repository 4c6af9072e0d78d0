import type { CompiledPublication } from '../../publication/compiled-publication.js';
import type { EntityOperation, EntityOperationKind } from '../../publication/operations.js';
import type { ProtocolName } from '../../versioning/platform.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import type { ParamDecl, TagDecl } from '../contract/index.js';
import { conditional, tagged, type Tagged } from './etag.js';
import { declaredCommands, type CliCommand } from '../contract/index.js';
import { familyOp, type FamilyContract } from './records-family-op.js';
import { DISCOVERY_SCHEMAS as DS } from './discovery-schemas.js';
import { DISCOVERY_TAG } from './document-schemas.js';

export { DISCOVERY_TAG };

export const discoveryOp = familyOp(DISCOVERY_TAG);

/** What the contract of a document with an `ETag` says beyond its summary, route and schema. */
export const DOCUMENT_CONTRACT = {
  description: 'A document of the serving publication with an `ETag`; `If-None-Match` with it answers 304.',
  headers: { 'If-None-Match': { description: 'An `ETag` this route answered: 304 without a body while the document is unchanged.' } } as Record<string, ParamDecl>,
  errors: [400, 401, 404],
} as const;

/**
 * Where each protocol of the project answers, relative to the server; every
 * protocol but webhooks, whose endpoints the project registers itself (`/api/webhooks`).
 */
export function endpointsOf(ctx: OperationContext, basePath: string): Record<Exclude<ProtocolName, 'webhooks'>, unknown> {
  const { tenant, project } = ctx.scope!;
  return {
    rest: { basePath, openapi: `${basePath}/openapi.json` },
    graphql: { endpoint: '/graphql', schema: '/graphql/schema', websocket: '/graphql' },
    realtime: { sse: `${basePath}/realtime/sse`, websocket: `${basePath}/realtime` },
    mcp: { endpoint: `/mcp/${tenant.slug}/${project.slug}` },
    // On the node's GRPC_PORT, with the tenant and project in metadata (docs/grpc.md).
    grpc: { proto: '/grpc/proto/service-app.proto', package: 'service.app', reflection: true },
  };
}

function descriptor(ctx: OperationContext, pub: CompiledPublication, basePath: string): Record<string, unknown> {
  const scope = ctx.scope!;
  const bindingsOf = new Map<string, string[]>();
  for (const b of pub.bindings) bindingsOf.set(b.capabilityId, [...(bindingsOf.get(b.capabilityId) ?? []), b.bindingId]);
  return {
    descriptorVersion: 1,
    tenant: scope.tenant.slug,
    project: scope.project.slug,
    branch: scope.branch,
    publicationVersion: pub.version,
    descriptorHash: pub.record.descriptorHash,
    endpoints: endpointsOf(ctx, basePath),
    entities: [...pub.entities.values()].map((e) => ({
      entityName: e.entityName, collection: e.collection, softDelete: e.softDelete,
      fields: e.userFields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable, ...(f.references === null ? {} : { references: f.references }) })),
    })),
    operations: [...pub.operations.values()].map((o): Record<string, unknown> => ({
      operationId: o.operationId, entity: o.entity, kind: o.kind, method: o.method, path: o.path,
      successStatus: o.successStatus, requiredGrants: o.requiredGrants, bindings: bindingsOf.get(o.operationId) ?? [],
    })).concat(pub.authoredOperations.map((o): Record<string, unknown> => ({
      // An authored operation (CONTRACT "Operations"): its capability id is its operationId, its surface names the handler's kind.
      operationId: o.capabilityId, entity: o.entity, kind: o.handler.surface, method: 'POST',
      path: o.collection === null ? `/operations/${o.name}` : `/${o.collection}/{id}/${o.name}`,
      successStatus: 200, requiredGrants: o.requiredGrants, bindings: bindingsOf.get(o.capabilityId) ?? [],
    }))),
    bindings: pub.bindings.map((b) => ({ bindingId: b.bindingId, protocolKind: b.protocolKind, exposureShape: b.exposureShape, routeOrName: b.routeOrName, descriptorHash: b.descriptorHash })),
  };
}

/** The CLI verb of each entity operation kind: a `Record` over the kinds, so a new kind does not build without its verb. */
const CLI_VERB: Record<EntityOperationKind, string> = {
  List: 'list', Read: 'get', Count: 'count', Create: 'create', Update: 'update', Replace: 'replace', Delete: 'delete',
  BatchCreate: 'batch-create', BatchUpdate: 'batch-update', BatchDelete: 'batch-delete',
  RelationList: 'list', RelationAttach: 'attach', RelationDetach: 'detach',
};

/** `customers list`, `customers get`, `orders items list`: a CLI verb per entity operation. */
function commandName(collection: string, o: EntityOperation): string {
  return [collection, ...(o.relation === null ? [] : [o.relation]), CLI_VERB[o.kind]].join(' ');
}

const pathArgs = (path: string): CliCommand['args'] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1]!, required: true }));

const flag = (name: string, type: string): CliCommand['flags'][number] => ({ name, type, required: false });
const READ_FLAGS = [flag('fields', 'string'), flag('include', 'string')];
const LIST_FLAGS = [flag('filter', 'json'), flag('sort', 'string'), flag('page-size', 'integer'), flag('cursor', 'string'), ...READ_FLAGS];
const DATA_FLAGS = [flag('data', 'json')];

/** The flags of each entity operation kind (CONTRACT: Developer tools): a `Record` over the kinds, like the verbs. */
const CLI_FLAGS: Record<EntityOperationKind, CliCommand['flags']> = {
  List: LIST_FLAGS, Read: READ_FLAGS, Count: [flag('filter', 'json')], RelationList: LIST_FLAGS,
  Create: DATA_FLAGS, Update: [...DATA_FLAGS, flag('if-match', 'string')], Replace: [...DATA_FLAGS, flag('if-match', 'string')], Delete: [flag('if-match', 'string')],
  BatchCreate: DATA_FLAGS, BatchUpdate: DATA_FLAGS, BatchDelete: DATA_FLAGS, RelationAttach: DATA_FLAGS, RelationDetach: [],
};

const summaryOf = (o: EntityOperation): string => `${o.kind.replace(/([a-z])([A-Z])/g, '$1 $2')} ${o.entity}${o.relation === null ? '' : ` ${o.relation}`}`;

function cli(ctx: OperationContext, pub: CompiledPublication, basePath: string): Record<string, unknown> {
  const scope = ctx.scope!;
  const collectionOf = new Map([...pub.entities.values()].map((e) => [e.entityName, e.collection]));
  return {
    cliDescriptorVersion: 2,
    tenant: scope.tenant.slug,
    project: scope.project.slug,
    branch: scope.branch,
    publicationVersion: pub.version,
    basePath,
    headers: { tenant: 'X-Service-Tenant', project: 'X-Service-Project', branch: 'X-Service-Branch', authorization: 'Authorization: Bearer <token>' },
    commands: [
      ...[...pub.operations.values()].map((o): CliCommand => ({
        name: commandName(collectionOf.get(o.entity) ?? o.entity, o),
        summary: summaryOf(o),
        operationId: o.operationId,
        method: o.method,
        path: `${basePath}${o.path}`,
        args: pathArgs(o.path),
        flags: CLI_FLAGS[o.kind],
        body: o.method === 'POST' || o.method === 'PUT' || o.method === 'PATCH',
        authn: 'user',
        requiredGrants: o.requiredGrants,
      })),
      // The platform's declared operations (branches, proposals, runs, …), from their contracts.
      ...declaredCommands(ctx.services.routes?.declared?.() ?? [], basePath),
    ],
  };
}

/** Built once per publication and base path, hashed once: a revalidation costs a map hit and a string compare. */
function memo(ctx: OperationContext, kind: string, build: (pub: CompiledPublication, basePath: string) => Record<string, unknown>): Tagged {
  const pub = ctx.scope!.publication;
  const basePath = ctx.inv.basePath === '/v1' ? '/v1' : '/api';
  return pub.derive(`${kind}${basePath}`, () => tagged(build(pub, basePath)));
}

/** Any credential of the project (scope headers), answered as a conditional document. */
const discovery = (id: string, contract: FamilyContract, kind: string, build: (ctx: OperationContext, pub: CompiledPublication, basePath: string) => Record<string, unknown>): DeclaredSpec =>
  discoveryOp(id, { authn: 'user', scope: 'project', requestHeaders: ['if-none-match'] }, contract,
    async (ctx) => conditional(ctx, memo(ctx, kind, (pub, basePath) => build(ctx, pub, basePath))));

/**
 * `/api/ContractProjection/descriptor` and `/cli`: what the project's
 * publication exposes, as documents (like openapi.json, not in the
 * control-plane envelope, so their ETag is stable across requests).
 */
export const CONTRACT_PROJECTION_SPECS = {
  descriptor: discovery('Discovery.ContractProjection.Descriptor', {
    summary: 'What the project\'s publication exposes: entities, operations, bindings, endpoints', routes: [{ method: 'GET', path: 'ContractProjection/descriptor' }],
    ...DOCUMENT_CONTRACT, output: { status: 200, body: DS.DiscoveryContractDescriptor, conditional: true },
  }, 'contract-descriptor', descriptor),
  cli: discovery('Discovery.ContractProjection.Cli', {
    summary: 'A CLI descriptor: one command per entity operation', routes: [{ method: 'GET', path: 'ContractProjection/cli' }],
    ...DOCUMENT_CONTRACT, output: { status: 200, body: DS.DiscoveryCliDescriptor, conditional: true },
  }, 'contract-cli', cli),
};
