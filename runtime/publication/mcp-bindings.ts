import type { ExposureBinding } from './exposure-binding.js';
import { toolVerbOf } from '../mcp/tool-kinds.js';
import type { EntityOperation } from './operations.js';
import type { PublicationRecord } from './record.js';

/**
 * The MCP exposure bindings of a publication (CONTRACT: MCP; docs/mcp.md):
 * one `McpTool` per entity tool (`mcp:Entity.Order.List`, tool `Order.list`)
 * with its REST twin's grants, one `McpResource` per entity schema resource
 * (`mcp:Entity.Order.Schema`: `service://schema/entities/Order`, the entity's read grant) and the one
 * `McpPrompt` (`entity.describe`, no grant of its own: it reads an entity's
 * schema only for a caller who may read the entity). Bodies without their
 * hash: bindings.ts hashes every binding the same way.
 */
/** An MCP binding before bindings.ts adds its hash. */
export type McpBindingBody = Omit<ExposureBinding, 'descriptorHash'> & {
  protocolKind: 'Mcp';
  exposureShape: 'McpTool' | 'McpResource' | 'McpPrompt';
};


export const mcpToolBindingId = (operationId: string): string => `mcp:${operationId}`;
export const mcpResourceBindingId = (entity: string): string => `mcp:Entity.${entity}.Schema`;
export const MCP_PROMPT_BINDING_ID = 'mcp:Prompt.entity.describe';

type Pub = Pick<PublicationRecord, 'tenantId' | 'projectId' | 'version'>;

function body(pub: Pub, b: Pick<McpBindingBody, 'bindingId' | 'capabilityId' | 'capabilityNodeId' | 'exposureShape' | 'routeOrName' | 'inputContractRef' | 'outputContractRef' | 'requiredGrantSet' | 'idempotencyPolicyRef'>): McpBindingBody {
  return {
    bindingId: b.bindingId,
    tenantId: pub.tenantId,
    projectId: pub.projectId,
    publicationVersion: pub.version,
    surfaceKind: 'WireSurface',
    surfaceName: 'mcp',
    surfaceVersion: 'v1',
    capabilityId: b.capabilityId,
    capabilityNodeId: b.capabilityNodeId,
    protocolKind: 'Mcp',
    exposureShape: b.exposureShape,
    routeOrName: b.routeOrName,
    inputContractRef: b.inputContractRef,
    outputContractRef: b.outputContractRef,
    errorContractRef: 'mcp:jsonrpc.error.data',
    authnContractRef: 'mcpBearer',
    authzPolicyRef: `grants:${b.requiredGrantSet.join('+')}`,
    requiredGrantSet: b.requiredGrantSet,
    rateLimitPolicyRef: 'default',
    idempotencyPolicyRef: b.idempotencyPolicyRef,
    observabilityPolicyRef: 'default',
    explanationReasonCodeBlock: 'ExposureBinding',
    stability: 'Stable',
    deprecationPolicy: null,
  };
}

export function mcpBindingBodies(pub: Pub, ops: readonly EntityOperation[]): McpBindingBody[] {
  const out: McpBindingBody[] = [];
  const entities: string[] = [];
  for (const op of ops) {
    const verb = op.relation === null ? toolVerbOf(op.kind) : undefined;
    if (verb === undefined) continue;
    if (!entities.includes(op.entity)) entities.push(op.entity);
    out.push(body(pub, {
      bindingId: mcpToolBindingId(op.operationId), capabilityId: op.operationId, capabilityNodeId: `entity:${op.entity}`, exposureShape: 'McpTool',
      routeOrName: `${op.entity}.${verb}`, inputContractRef: `mcp:tool:${op.entity}.${verb}#inputSchema`, outputContractRef: `#/components/schemas/${op.entity}`,
      requiredGrantSet: [...op.requiredGrants], idempotencyPolicyRef: op.kind === 'Create' ? 'idempotency-key:24h' : null,
    }));
  }
  for (const entity of entities) {
    out.push(body(pub, {
      bindingId: mcpResourceBindingId(entity), capabilityId: `Entity.${entity}.Schema`, capabilityNodeId: `entity:${entity}`, exposureShape: 'McpResource',
      routeOrName: `service://schema/entities/${entity}`, inputContractRef: '', outputContractRef: 'mcp:resource:entity-schema',
      requiredGrantSet: [`entity:${entity}:read`], idempotencyPolicyRef: null,
    }));
  }
  out.push(body(pub, {
    bindingId: MCP_PROMPT_BINDING_ID, capabilityId: 'Prompt.entity.describe', capabilityNodeId: 'project', exposureShape: 'McpPrompt',
    routeOrName: 'entity.describe', inputContractRef: 'mcp:prompt:entity.describe#arguments', outputContractRef: 'mcp:prompt:messages',
    requiredGrantSet: [], idempotencyPolicyRef: null,
  }));
  return out;
}
