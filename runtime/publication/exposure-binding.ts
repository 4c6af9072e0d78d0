import type { CapabilitySurfaceKind } from './surface-kinds.js';

/** The spec's exposure binding descriptor (Resources: Exposure binding descriptor). */
export interface ExposureBinding {
  bindingId: string;
  tenantId: string;
  projectId: string;
  publicationVersion: number;
  surfaceKind: CapabilitySurfaceKind;
  surfaceName: string;
  surfaceVersion: string;
  capabilityId: string;
  capabilityNodeId: string;
  protocolKind: 'Rest' | 'OpenApi' | 'GraphQL' | 'Grpc' | 'Mcp';
  exposureShape: 'RestRoute' | 'OpenApiOperation' | 'GraphQLField' | 'GraphQLMutation' | 'GraphQLSubscription' | 'GrpcMethod' | 'McpTool' | 'McpResource' | 'McpPrompt';
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
