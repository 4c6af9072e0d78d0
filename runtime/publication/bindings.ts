import { entityTypeNames, GRAPHQL_ROOT_KINDS, type GraphQLRootKind, type NamedEntity } from '../graphql/names.js';
import { servableGrpcEntities } from '../grpc/names.js';
import { authoredBindingBodies } from './authored-bindings.js';
import type { AuthoredOperation } from './authored-operations.js';
import { grpcBindings } from './grpc-bindings.js';
import type { ExposureBinding } from './exposure-binding.js';
import type { EntityOperation } from './operations.js';
import { canonicalJson, sha256Hex } from './hash.js';
import type { PublicationRecord } from './record.js';
import { mcpBindingBodies } from './mcp-bindings.js';

export type { ExposureBinding } from './exposure-binding.js';


type BindingBody = Omit<ExposureBinding, 'descriptorHash'>;

/** The hash covers every field but itself, so the same publication always yields the same hashes. */
const hashed = (body: BindingBody): ExposureBinding => ({ ...body, descriptorHash: `sha256:${sha256Hex(canonicalJson(body))}` });

/**
 * The exposure bindings of a publication: one REST binding per entity
 * operation, and one GraphQL binding per root field that projects an entity
 * operation (`Query.orders` → `Entity.Order.List`, …, `Subscription.orderChanged`),
 * and the MCP tools, resources and prompt (mcp-bindings.ts).
 * The authored operations get theirs in every protocol (authored-bindings.ts).
 * `graphqlKept`: the entities the GraphQL schema serves (names/servableEntities).
 */
export function buildBindings(pub: Pick<PublicationRecord, 'tenantId' | 'projectId' | 'version'>, ops: readonly EntityOperation[], graphqlKept: readonly NamedEntity[], authored: readonly AuthoredOperation[] = []): ExposureBinding[] {
  const graphqlEntities = new Set(graphqlKept.map((e) => e.entityName));
  const out = ops.map((op) => hashed({
    bindingId: `rest:${op.operationId}`,
    tenantId: pub.tenantId,
    projectId: pub.projectId,
    publicationVersion: pub.version,
    surfaceKind: 'WireSurface',
    surfaceName: 'rest',
    surfaceVersion: 'v1',
    capabilityId: op.operationId,
    capabilityNodeId: `entity:${op.entity}`,
    protocolKind: 'Rest',
    exposureShape: 'RestRoute',
    routeOrName: `${op.method} ${op.path}`,
    inputContractRef: `#/components/schemas/${op.entity}${inputSuffix(op.kind)}`,
    outputContractRef: `#/components/schemas/${op.entity}`,
    errorContractRef: '#/components/schemas/ErrorEnvelope',
    authnContractRef: 'bearer',
    authzPolicyRef: `grants:${op.requiredGrants.join('+')}`,
    requiredGrantSet: op.requiredGrants,
    rateLimitPolicyRef: 'default',
    idempotencyPolicyRef: op.kind === 'Create' || op.kind === 'BatchCreate' ? 'idempotency-key:24h' : null,
    observabilityPolicyRef: 'default',
    explanationReasonCodeBlock: 'ExposureBinding',
    stability: 'Stable',
    deprecationPolicy: null,
  }));
  for (const op of ops) {
    if (!graphqlEntities.has(op.entity)) continue;
    const field = graphqlFieldOf(op);
    if (field !== null) out.push(graphqlBinding(pub, op.operationId, op.entity, field, op.requiredGrants, op.kind === 'Create' ? 'idempotency-key:24h' : null));
  }
  // The subscription projects the realtime capability: reading changes needs what reading rows needs.
  for (const entity of [...new Set(ops.map((o) => o.entity))]) {
    if (!graphqlEntities.has(entity)) continue;
    const read = ops.find((o) => o.entity === entity && o.kind === 'Read');
    const n = entityTypeNames(entity);
    out.push(graphqlBinding(pub, `Entity.${entity}.Subscribe`, entity, { shape: 'GraphQLSubscription', name: `Subscription.${n.changedField}`, input: n.filter, output: n.change }, read?.requiredGrants ?? [`entity:${entity}:read`], null));
  }
  for (const b of mcpBindingBodies(pub, ops)) out.push(hashed(b));
  out.push(...grpcBindings(pub, ops));
  const grpcEntities = servableGrpcEntities([...new Set(ops.map((o) => o.entity))].map((entityName) => ({ entityName }))).kept.map((e) => e.entityName);
  for (const b of authoredBindingBodies(pub, authored, graphqlKept, grpcEntities)) out.push(hashed(b));
  return out;
}

interface GraphQLFieldRef {
  shape: 'GraphQLField' | 'GraphQLMutation' | 'GraphQLSubscription';
  /** `Query.orders`, `Mutation.createOrder`, `Subscription.orderChanged`. */
  name: string;
  /** The input type (a name in the SDL of `GET /graphql/schema`), or '' for arguments without one. */
  input: string;
  output: string;
}

/** The root field an entity operation is projected to, if GraphQL projects it (not batches, replace, relation links). */
function graphqlFieldOf(op: EntityOperation): GraphQLFieldRef | null {
  const n = entityTypeNames(op.entity);
  const byRoot: Record<GraphQLRootKind, GraphQLFieldRef> = {
    list: { shape: 'GraphQLField', name: `Query.${n.listField}`, input: n.filter, output: n.connection },
    one: { shape: 'GraphQLField', name: `Query.${n.oneField}`, input: '', output: n.object },
    create: { shape: 'GraphQLMutation', name: `Mutation.${n.createField}`, input: n.createInput, output: n.object },
    update: { shape: 'GraphQLMutation', name: `Mutation.${n.updateField}`, input: n.updateInput, output: n.object },
    delete: { shape: 'GraphQLMutation', name: `Mutation.${n.deleteField}`, input: '', output: 'DeleteResult' },
  };
  const root = (Object.keys(GRAPHQL_ROOT_KINDS) as GraphQLRootKind[]).find((r) => GRAPHQL_ROOT_KINDS[r] === op.kind);
  return op.relation === null && root !== undefined ? byRoot[root] : null;
}

function graphqlBinding(pub: Pick<PublicationRecord, 'tenantId' | 'projectId' | 'version'>, capabilityId: string, entity: string, f: GraphQLFieldRef, grants: readonly string[], idempotency: string | null): ExposureBinding {
  return hashed({
    bindingId: `graphql:${capabilityId}`,
    tenantId: pub.tenantId,
    projectId: pub.projectId,
    publicationVersion: pub.version,
    surfaceKind: 'WireSurface',
    surfaceName: 'graphql',
    surfaceVersion: 'v1',
    capabilityId,
    capabilityNodeId: `entity:${entity}`,
    protocolKind: 'GraphQL',
    exposureShape: f.shape,
    routeOrName: f.name,
    inputContractRef: f.input === '' ? '' : `graphql:${f.input}`,
    outputContractRef: `graphql:${f.output}`,
    errorContractRef: 'graphql:errors.extensions',
    authnContractRef: 'bearer',
    authzPolicyRef: `grants:${grants.join('+')}`,
    requiredGrantSet: [...grants],
    rateLimitPolicyRef: 'default',
    idempotencyPolicyRef: idempotency,
    observabilityPolicyRef: 'default',
    explanationReasonCodeBlock: 'ExposureBinding',
    stability: 'Stable',
    deprecationPolicy: null,
  });
}

function inputSuffix(kind: EntityOperation['kind']): string {
  if (kind === 'Create' || kind === 'BatchCreate') return 'CreateInput';
  if (kind === 'Update' || kind === 'BatchUpdate') return 'UpdateInput';
  if (kind === 'Replace') return 'ReplaceInput';
  return '';
}
