import { GRPC_METHOD_CAPABILITIES, grpcEntityNames, PROTO_PACKAGE, servableGrpcEntities, type GrpcMethodName } from '../grpc/names.js';
import type { ExposureBinding } from './exposure-binding.js';
import { canonicalJson, sha256Hex } from './hash.js';
import type { EntityOperation } from './operations.js';
import type { PublicationRecord } from './record.js';

/** The binding's id suffix where two methods project one capability (StreamList and List). */
const SUFFIX: Partial<Record<GrpcMethodName, string>> = { StreamList: 'Stream' };

/**
 * The binding a method of an entity's service projects: `grpc:Entity.Order.Read`, `grpc:Entity.Order.List.Stream`, `grpc:Entity.Order.Subscribe`.
 * Watch projects the realtime capability, as GraphQL's subscription does: reading changes needs what reading rows needs.
 */
export function grpcBindingId(entityName: string, method: GrpcMethodName): string {
  const suffix = SUFFIX[method];
  return `grpc:Entity.${entityName}.${GRPC_METHOD_CAPABILITIES[method]}${suffix === undefined ? '' : `.${suffix}`}`;
}

const METHOD_IO = (n: ReturnType<typeof grpcEntityNames>): Record<GrpcMethodName, [string, string]> => ({
  Get: [n.getRequest, n.message], List: [n.listRequest, n.listResponse], Create: [n.createRequest, n.message],
  Update: [n.updateRequest, n.message], Delete: [n.deleteRequest, n.deleteResponse], StreamList: [n.listRequest, n.message],
  Watch: [n.watchRequest, n.change], BatchCreate: [n.input, n.batchResponse],
});

/**
 * The gRPC exposure bindings of a publication: one `GrpcMethod` per method
 * of every entity service the proto carries (`grpc:Entity.Order.Read`,
 * routeOrName `service.app.OrderService/Get`), with the grant set of the
 * REST twin the method dispatches. StreamList shares List's capability
 * (`grpc:Entity.Order.List.Stream`).
 */
export function grpcBindings(pub: Pick<PublicationRecord, 'tenantId' | 'projectId' | 'version'>, ops: readonly EntityOperation[]): ExposureBinding[] {
  const entities = servableGrpcEntities([...new Set(ops.map((o) => o.entity))].map((entityName) => ({ entityName }))).kept;
  const out: ExposureBinding[] = [];
  for (const { entityName } of entities) {
    const n = grpcEntityNames(entityName);
    const io = METHOD_IO(n);
    for (const method of Object.keys(GRPC_METHOD_CAPABILITIES) as GrpcMethodName[]) {
      const kind = GRPC_METHOD_CAPABILITIES[method];
      const op = kind === 'Subscribe' ? undefined : ops.find((o) => o.entity === entityName && o.kind === kind && o.relation === null);
      const capabilityId = `Entity.${entityName}.${kind}`;
      const grants = op?.requiredGrants ?? [`entity:${entityName}:read`];
      const body: Omit<ExposureBinding, 'descriptorHash'> = {
        bindingId: grpcBindingId(entityName, method),
        tenantId: pub.tenantId,
        projectId: pub.projectId,
        publicationVersion: pub.version,
        surfaceKind: 'WireSurface',
        surfaceName: 'grpc',
        surfaceVersion: 'v1',
        capabilityId,
        capabilityNodeId: `entity:${entityName}`,
        protocolKind: 'Grpc',
        exposureShape: 'GrpcMethod',
        routeOrName: `${PROTO_PACKAGE}.${n.service}/${method}`,
        inputContractRef: `grpc:${PROTO_PACKAGE}.${io[method][0]}`,
        outputContractRef: `grpc:${PROTO_PACKAGE}.${io[method][1]}`,
        errorContractRef: 'grpc:status+x-service-trailers',
        authnContractRef: 'bearer',
        authzPolicyRef: `grants:${grants.join('+')}`,
        requiredGrantSet: [...grants],
        rateLimitPolicyRef: 'default',
        idempotencyPolicyRef: method === 'Create' ? 'idempotency-key:24h' : null,
        observabilityPolicyRef: 'default',
        explanationReasonCodeBlock: 'ExposureBinding',
        stability: 'Stable',
        deprecationPolicy: null,
      };
      out.push({ ...body, descriptorHash: `sha256:${sha256Hex(canonicalJson(body))}` });
    }
  }
  return out;
}
