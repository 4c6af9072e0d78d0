import type { EntityOperation } from './operations.js';
import { canonicalJson, sha256Hex } from './hash.js';
import type { PublicationRecord } from './compiled-publication.js';

/** The spec's exposure binding descriptor (Resources: Exposure binding descriptor). */
export interface ExposureBinding {
  bindingId: string;
  tenantId: string;
  projectId: string;
  publicationVersion: number;
  surfaceKind: string;
  surfaceName: string;
  surfaceVersion: string;
  capabilityId: string;
  capabilityNodeId: string;
  protocolKind: 'Rest' | 'OpenApi';
  exposureShape: 'RestRoute' | 'OpenApiOperation';
  routeOrName: string;
  inputContractRef: string;
  outputContractRef: string;
  errorContractRef: string;
  authnContractRef: string;
  authzPolicyRef: string;
  requiredGrantSet: string[];
  rateLimitPolicyRef: string;
  idempotencyPolicyRef: string | null;
  observabilityPolicyRef: string;
  explanationReasonCodeBlock: string;
  stability: 'Experimental' | 'Beta' | 'Stable' | 'Deprecated' | 'Retired';
  deprecationPolicy: null;
  descriptorHash: string;
}


/**
 * One REST binding per entity operation. The hash covers every field but
 * itself, so the same publication always yields the same hashes.
 */
export function buildBindings(pub: Pick<PublicationRecord, 'tenantId' | 'projectId' | 'version'>, ops: readonly EntityOperation[]): ExposureBinding[] {
  return ops.map((op) => {
    const body: Omit<ExposureBinding, 'descriptorHash'> = {
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
    };
    return { ...body, descriptorHash: `sha256:${sha256Hex(canonicalJson(body))}` };
  });
}

function inputSuffix(kind: EntityOperation['kind']): string {
  if (kind === 'Create' || kind === 'BatchCreate') return 'CreateInput';
  if (kind === 'Update' || kind === 'BatchUpdate') return 'UpdateInput';
  if (kind === 'Replace') return 'ReplaceInput';
  return '';
}
