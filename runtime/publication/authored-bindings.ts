import { graphqlOperationNames, servableGraphQLOperations } from '../graphql/operation-names.js';
import type { NamedEntity } from '../graphql/names.js';
import { grpcOperationRef, servableGrpcOperations } from '../grpc/operation-names.js';
import { PROTO_PACKAGE } from '../grpc/names.js';
import { operationToolName, servableMcpOperations } from '../mcp/operation-tool-names.js';
import type { AuthoredOperation } from './authored-operations.js';
import type { ExposureBinding } from './exposure-binding.js';
import { mcpToolBindingId } from './mcp-bindings.js';
import type { PublicationRecord } from './record.js';

type Pub = Pick<PublicationRecord, 'tenantId' | 'projectId' | 'version'>;
type Body = Omit<ExposureBinding, 'descriptorHash'>;
type Varying = Pick<Body, 'bindingId' | 'surfaceName' | 'protocolKind' | 'exposureShape' | 'routeOrName' | 'inputContractRef' | 'outputContractRef' | 'errorContractRef' | 'authnContractRef' | 'idempotencyPolicyRef'>;

/** `Idempotency-Key` works as on create (CONTRACT "Operations"); a tool or method carries none. */
const IDEMPOTENT = 'idempotency-key:24h';

function body(pub: Pub, op: AuthoredOperation, v: Varying): Body {
  return {
    ...v,
    tenantId: pub.tenantId,
    projectId: pub.projectId,
    publicationVersion: pub.version,
    surfaceKind: 'WireSurface',
    surfaceVersion: 'v1',
    capabilityId: op.capabilityId,
    capabilityNodeId: op.entity === null ? `operation:${op.name}` : `entity:${op.entity}`,
    authzPolicyRef: `grants:${op.requiredGrants.join('+')}`,
    requiredGrantSet: [...op.requiredGrants],
    rateLimitPolicyRef: 'default',
    observabilityPolicyRef: 'default',
    explanationReasonCodeBlock: 'ExposureBinding',
    stability: 'Stable',
    deprecationPolicy: null,
  };
}

/** The operation's own schemas, as the handler declared them (`input`, `output`). */
const contractRef = (op: AuthoredOperation, part: 'input' | 'output'): string => `authored:${op.capabilityId}#/${part}`;

/**
 * The exposure bindings of the authored operations (CONTRACT "Operations":
 * "The exposure bindings list each"): REST `rest:<capabilityId>` for every
 * operation, and GraphQL, gRPC and MCP bindings for the operations each
 * protocol serves (the same servable lists its schema, proto and tool list
 * are built from). Bodies without their hash: bindings.ts hashes them all alike.
 * `graphqlEntities` / `grpcEntities`: the entities those protocols serve.
 */
export function authoredBindingBodies(pub: Pub, ops: readonly AuthoredOperation[], graphqlEntities: readonly NamedEntity[], grpcEntities: readonly string[]): Body[] {
  const out: Body[] = [];
  for (const op of ops) {
    out.push(body(pub, op, {
      bindingId: `rest:${op.capabilityId}`, surfaceName: 'rest', protocolKind: 'Rest', exposureShape: 'RestRoute',
      routeOrName: op.collection === null ? `POST /api/operations/${op.name}` : `POST /api/${op.collection}/{id}/${op.name}`,
      inputContractRef: contractRef(op, 'input'), outputContractRef: contractRef(op, 'output'),
      errorContractRef: '#/components/schemas/ErrorEnvelope', authnContractRef: 'bearer', idempotencyPolicyRef: IDEMPOTENT,
    }));
  }
  for (const op of servableGraphQLOperations(ops, graphqlEntities)) {
    const n = graphqlOperationNames(op.name);
    out.push(body(pub, op, {
      bindingId: `graphql:${op.capabilityId}`, surfaceName: 'graphql', protocolKind: 'GraphQL', exposureShape: 'GraphQLMutation',
      routeOrName: `Mutation.${n.field}`, inputContractRef: `graphql:${n.input}`, outputContractRef: `graphql:${n.result}`,
      errorContractRef: 'graphql:errors.extensions', authnContractRef: 'bearer', idempotencyPolicyRef: IDEMPOTENT,
    }));
  }
  for (const op of servableGrpcOperations(ops, grpcEntities)) {
    const ref = grpcOperationRef(op);
    out.push(body(pub, op, {
      bindingId: `grpc:${op.capabilityId}`, surfaceName: 'grpc', protocolKind: 'Grpc', exposureShape: 'GrpcMethod',
      routeOrName: `${PROTO_PACKAGE}.${ref.service}/${ref.method}`, inputContractRef: 'grpc:google.protobuf.Struct', outputContractRef: 'grpc:google.protobuf.Struct',
      errorContractRef: 'grpc:status+x-service-trailers', authnContractRef: 'bearer', idempotencyPolicyRef: null,
    }));
  }
  for (const op of servableMcpOperations(ops)) {
    const tool = operationToolName(op);
    out.push(body(pub, op, {
      bindingId: mcpToolBindingId(op.capabilityId), surfaceName: 'mcp', protocolKind: 'Mcp', exposureShape: 'McpTool',
      routeOrName: tool, inputContractRef: `mcp:tool:${tool}#inputSchema`, outputContractRef: contractRef(op, 'output'),
      errorContractRef: 'mcp:jsonrpc.error.data', authnContractRef: 'mcpBearer', idempotencyPolicyRef: null,
    }));
  }
  return out;
}
