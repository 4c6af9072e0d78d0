import { CAPABILITY_SURFACE_ORDINALS, type CapabilitySurfaceKind } from '../../publication/surface-kinds.js';
import type { ExposureBinding } from '../../publication/exposure-binding.js';
import { PROTOCOLS, type ProtocolName } from '../../versioning/platform.js';
import type { OperationContext } from '../types.js';

/** One entry of `GET /api/Explainability/surface`: a capability surface (spec kind and ordinal) and what it serves. */
export interface SurfaceEntry {
  surfaceKind: CapabilitySurfaceKind;
  ordinal: number;
  surfaceName: string;
  enabled: boolean;
  [detail: string]: unknown;
}

const surface = (surfaceKind: CapabilitySurfaceKind, surfaceName: string, enabled: boolean, details: Record<string, unknown> = {}): SurfaceEntry =>
  ({ surfaceKind, ordinal: CAPABILITY_SURFACE_ORDINALS[surfaceKind], surfaceName, enabled, ...details });

const bindingCount = (ctx: OperationContext, protocolKind: ExposureBinding['protocolKind']): number =>
  ctx.scope!.publication.bindings.filter((b) => b.protocolKind === protocolKind).length;

/**
 * The surface each protocol is: a `Record` over the protocols, so a protocol
 * added to the build does not compile until Explainability lists it.
 */
const PROTOCOL_SURFACES: Record<ProtocolName, (ctx: OperationContext) => SurfaceEntry> = {
  rest: (ctx) => surface('WireSurface', 'rest', true, { bindingCount: bindingCount(ctx, 'Rest'), basePaths: ['/api', '/v1'] }),
  graphql: (ctx) => surface('WireSurface', 'graphql', true, {
    bindingCount: bindingCount(ctx, 'GraphQL'), routes: ['/graphql', '/graphql/schema'], subscriptions: ctx.services.realtime !== undefined,
  }),
  mcp: (ctx) => surface('WireSurface', 'mcp', true, { bindingCount: bindingCount(ctx, 'Mcp'), routes: ['/mcp/{tenantSlug}/{projectSlug}'] }),
  // Every node serves gRPC on its GRPC_PORT (docs/grpc.md).
  grpc: (ctx) => surface('WireSurface', 'grpc', true, { bindingCount: bindingCount(ctx, 'Grpc'), routes: ['/grpc/proto/service-app.proto'] }),
  webhooks: (ctx) => surface('WebhookSurface', 'webhooks', ctx.services.webhooks !== undefined),
  realtime: (ctx) => surface('RealtimeSurface', 'realtime', ctx.services.realtime !== undefined),
};

/** Every protocol's surface and the platform's other surfaces, in the spec's ordinal order (protocols in PROTOCOLS order within one). */
export function surfacesOf(ctx: OperationContext): SurfaceEntry[] {
  return [
    ...PROTOCOLS.map((p) => PROTOCOL_SURFACES[p](ctx)),
    surface('OperationProjectionSurface', 'openapi', true, { routes: ['/api/openapi.json', '/api/openapi.yaml'] }),
    surface('EventVocabularySurface', 'events', true, { routes: ['/api/events', '/api/events/tail'] }),
    surface('ExplainabilitySurface', 'explainability', true),
  ].sort((a, b) => a.ordinal - b.ordinal);
}
