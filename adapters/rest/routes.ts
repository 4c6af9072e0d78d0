import { SCHEMA_TRANSITION_SPECS } from '../../runtime/operations/control/schema-transition.js';
import { ENTITY_SPECS } from '../../runtime/operations/entity/index.js';
import { DISCOVERY_SPECS } from '../../runtime/operations/control/discovery.js';
import { HEALTH_SPECS } from '../../runtime/operations/control/health.js';
import { EVENT_SPECS } from '../../runtime/operations/control/events.js';
import { PROJECT_SPECS } from '../../runtime/operations/control/projects.js';
import { GOVERNANCE_SPECS } from '../../runtime/operations/control/governance.js';
import { SCHEMA_SPECS } from '../../runtime/operations/control/schema.js';
import { TENANT_SPECS } from '../../runtime/operations/control/tenants.js';
import { REALTIME_SPECS } from '../../runtime/operations/realtime/index.js';
import { AUDIT_SPECS } from '../../runtime/operations/control/audit.js';
import { QUOTA_SPECS as Q, USAGE_SPECS } from '../../runtime/operations/usage/index.js';
import { INBOUND_WEBHOOK_SPECS } from '../../runtime/operations/webhooks/inbound.js';
import { WEBHOOK_DIAGNOSTICS_SPECS } from '../../runtime/operations/webhooks/diagnostics.js';
import { OUTBOUND_WEBHOOK_SPECS as OW } from '../../runtime/operations/webhooks/outbound.js';
import { REPLAY_SPECS } from '../../runtime/operations/webhooks/replay.js';
import { EXPLAIN_ACCESS_READ_SPEC } from '../../runtime/operations/explainability/access-read.js';
import { EXPLAIN_API_SURFACE_SPEC } from '../../runtime/operations/explainability/api-surface.js';
import { EXPLAIN_PUBLICATION_SPECS as XP } from '../../runtime/operations/explainability/publication.js';
import { EXPLAIN_READ_PLAN_SPEC } from '../../runtime/operations/explainability/read-plan.js';
import type { OperationSpec } from '../../runtime/operations/types.js';
import { RECORD_ROUTES } from './routes-records.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';
import { PROPOSAL_ROUTES } from './routes-proposals.js';
import { accessPostSpec } from '../../runtime/operations/explainability/access-post.js';
import { notFoundSpec } from './not-found.js';
import { GRAPHQL_SCHEMA_SPEC } from '../../runtime/operations/graphql/schema-sdl.js';
import { GRAPHQL_REQUEST_SPEC } from '../../runtime/operations/graphql/request.js';
import { GRAPHQL_PLAYGROUND_SPECS } from '../../runtime/operations/graphql/playground.js';
import { GRPC_PROTO_SPEC } from '../../runtime/operations/grpc/proto.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A fixed route: path segments after the base, `:name` captures a parameter. */
export interface StaticRoute {
  method: Method;
  path: string;
  spec: OperationSpec;
}

/** Outbound webhooks' routes, as tails under each of WEBHOOK_BASES: one list, so `/api/Webhook` cannot drift from `/api/webhooks`. */
const OUTBOUND_WEBHOOK_ROUTES: ReadonlyArray<{ method: Method; tail: string; spec: OperationSpec }> = [
  { method: 'GET', tail: 'endpoints', spec: OW.list },
  { method: 'POST', tail: 'endpoints', spec: OW.create },
  { method: 'GET', tail: 'endpoints/:id', spec: OW.read },
  { method: 'PUT', tail: 'endpoints/:id', spec: OW.replace },
  { method: 'PATCH', tail: 'endpoints/:id', spec: OW.patch },
  { method: 'DELETE', tail: 'endpoints/:id', spec: OW.delete },
  { method: 'POST', tail: 'endpoints/:id/rotate-secret', spec: OW.rotateSecret },
  { method: 'GET', tail: 'endpoints/:endpointId/deliveries', spec: OW.endpointDeliveries },
  { method: 'GET', tail: 'deliveries', spec: OW.deliveries },
  { method: 'POST', tail: 'deliveries/:deliveryId/replay', spec: REPLAY_SPECS.delivery },
];
/** `webhooks` and its `Webhook` alias (the spec's resource name). */
const WEBHOOK_BASES = ['webhooks', 'Webhook'] as const;

/** The routes of declared operations, as their contracts name them (runtime/operations/catalog.ts). */
const DECLARED_ROUTES: StaticRoute[] = PLATFORM_OPERATIONS.flatMap((spec) => spec.contract.routes.map((r) => ({ method: r.method, path: r.path, spec })));

/**
 * Every non-entity REST route of the platform. Entity routes are resolved by shape in router.ts.
 * Routes still written here belong to operations not yet declared with a contract (issue 23).
 */
export const STATIC_ROUTES: StaticRoute[] = [
  ...DECLARED_ROUTES,
  { method: 'GET', path: 'health', spec: HEALTH_SPECS.health },
  { method: 'GET', path: 'health/live', spec: HEALTH_SPECS.live },
  { method: 'GET', path: 'health/ready', spec: HEALTH_SPECS.ready },
  { method: 'GET', path: 'RuntimeFabric/:projectId/fabric', spec: HEALTH_SPECS.fabric },
  { method: 'GET', path: 'openapi.json', spec: DISCOVERY_SPECS.openApiJson! },
  { method: 'GET', path: 'openapi.yaml', spec: DISCOVERY_SPECS.openApiYaml! },
  // Also answered at /graphql/schema (handler.ts).
  { method: 'GET', path: 'graphql/schema', spec: GRAPHQL_SCHEMA_SPEC },
  { method: 'POST', path: 'graphql', spec: GRAPHQL_REQUEST_SPEC },
  { method: 'GET', path: 'graphql', spec: GRAPHQL_PLAYGROUND_SPECS.page },
  { method: 'GET', path: 'graphql/assets/:file', spec: GRAPHQL_PLAYGROUND_SPECS.asset },
  // Also answered at /grpc/proto/service-app.proto (handler.ts).
  { method: 'GET', path: 'grpc/proto/service-app.proto', spec: GRPC_PROTO_SPEC },

  { method: 'GET', path: 'TenantRecord', spec: TENANT_SPECS.list },
  { method: 'POST', path: 'TenantRecord', spec: TENANT_SPECS.create },
  { method: 'GET', path: 'TenantRecord/:id', spec: TENANT_SPECS.read },
  { method: 'PUT', path: 'TenantRecord/:id', spec: TENANT_SPECS.update },
  { method: 'DELETE', path: 'TenantRecord/:id', spec: TENANT_SPECS.delete },

  { method: 'POST', path: 'Explainability/access', spec: accessPostSpec },

  { method: 'POST', path: 'projects/create', spec: PROJECT_SPECS.create },
  { method: 'GET', path: 'projects/resolve', spec: PROJECT_SPECS.resolve },
  { method: 'POST', path: 'projects/:parentProjectId/children', spec: PROJECT_SPECS.createChild },
  { method: 'GET', path: 'projects/:projectId/children', spec: PROJECT_SPECS.children },
  { method: 'GET', path: 'projects/:projectId/descendants', spec: PROJECT_SPECS.descendants },
  { method: 'GET', path: 'projects/:projectId/ancestors', spec: PROJECT_SPECS.ancestors },
  { method: 'POST', path: 'projects/:projectId/suspend', spec: PROJECT_SPECS.suspend },
  { method: 'POST', path: 'projects/:projectId/resume', spec: PROJECT_SPECS.resume },
  { method: 'POST', path: 'projects/:projectId/archive', spec: PROJECT_SPECS.archive },
  { method: 'GET', path: 'projects/:projectId/governance/envelope', spec: GOVERNANCE_SPECS.envelope },
  { method: 'GET', path: 'projects/:projectId/governance/inheritance-policy', spec: GOVERNANCE_SPECS.getPolicy },
  { method: 'PUT', path: 'projects/:projectId/governance/inheritance-policy', spec: GOVERNANCE_SPECS.putPolicy },

  { method: 'GET', path: 'ProjectRecord', spec: PROJECT_SPECS.recordList },
  { method: 'POST', path: 'ProjectRecord', spec: PROJECT_SPECS.recordCreate },
  { method: 'GET', path: 'ProjectRecord/:id', spec: PROJECT_SPECS.recordRead },
  { method: 'PUT', path: 'ProjectRecord/:id', spec: PROJECT_SPECS.recordUpdate },
  { method: 'DELETE', path: 'ProjectRecord/:id', spec: PROJECT_SPECS.recordDelete },
  ...RECORD_ROUTES,
  ...PROPOSAL_ROUTES,

  { method: 'POST', path: 'Schema/entities', spec: SCHEMA_SPECS.create },
  { method: 'PUT', path: 'Schema/entities', spec: SCHEMA_SPECS.alter },
  { method: 'DELETE', path: 'Schema/entities', spec: SCHEMA_SPECS.delete },
  { method: 'POST', path: 'Schema/entities/delete', spec: SCHEMA_SPECS.delete },
  { method: 'POST', path: 'Schema/entities/preview', spec: SCHEMA_SPECS.preview },
  { method: 'POST', path: 'Schema/entities/validate', spec: SCHEMA_SPECS.validate },
  { method: 'GET', path: 'Schema/entities/metadata', spec: SCHEMA_SPECS.metadata },
  { method: 'GET', path: 'Schema/entities/metadata/:entityName', spec: SCHEMA_SPECS.metadataEntity },
  { method: 'GET', path: 'Schema/diff', spec: SCHEMA_SPECS.diff },
  { method: 'GET', path: 'Schema/journal', spec: SCHEMA_SPECS.journal },
  { method: 'GET', path: 'Schema/journal/:id', spec: SCHEMA_SPECS.journalEntry },
  { method: 'POST', path: 'Schema/journal/:id/recover', spec: SCHEMA_SPECS.recover },
  { method: 'GET', path: 'Schema/migration-history/:entityName', spec: SCHEMA_SPECS.history },
  { method: 'POST', path: 'Schema/migrate/apply', spec: SCHEMA_SPECS.apply },
  { method: 'POST', path: 'Schema/migrate/rollback/:journalId', spec: SCHEMA_SPECS.rollback },
  { method: 'POST', path: 'Schema/entities/batch', spec: SCHEMA_SPECS.batch },
  { method: 'POST', path: 'Schema/entities/delete-batch', spec: SCHEMA_SPECS.deleteBatch },
  { method: 'POST', path: 'Schema/snapshots', spec: SCHEMA_SPECS.snapshotCreate },
  { method: 'GET', path: 'Schema/snapshots', spec: SCHEMA_SPECS.snapshotList },
  { method: 'GET', path: 'Schema/snapshots/:id', spec: SCHEMA_SPECS.snapshotRead },
  { method: 'DELETE', path: 'Schema/entities/batch', spec: SCHEMA_SPECS.deleteBatch },
  { method: 'GET', path: 'SchemaTransition', spec: SCHEMA_TRANSITION_SPECS.list },
  { method: 'POST', path: 'SchemaTransition', spec: SCHEMA_TRANSITION_SPECS.create },
  { method: 'POST', path: 'SchemaTransition/preview', spec: SCHEMA_TRANSITION_SPECS.preview },
  { method: 'GET', path: 'SchemaTransition/:id', spec: SCHEMA_TRANSITION_SPECS.read },
  { method: 'POST', path: 'SchemaTransition/:id/execute', spec: SCHEMA_TRANSITION_SPECS.execute },
  { method: 'POST', path: 'SchemaTransition/:id/rollback', spec: SCHEMA_TRANSITION_SPECS.rollback },

  { method: 'GET', path: 'events', spec: EVENT_SPECS.list },
  { method: 'GET', path: 'Event', spec: EVENT_SPECS.list },
  // Before events/:id: static segments are matched in order.
  { method: 'GET', path: 'events/tail', spec: EVENT_SPECS.tail },
  { method: 'GET', path: 'events/:id', spec: EVENT_SPECS.read },
  { method: 'GET', path: 'Event/:id', spec: EVENT_SPECS.read },
  { method: 'POST', path: 'events/:id/replay', spec: REPLAY_SPECS.event },
  { method: 'POST', path: 'Event/:id/replay', spec: REPLAY_SPECS.event },

  ...WEBHOOK_BASES.flatMap((base) => OUTBOUND_WEBHOOK_ROUTES.map((r) => ({ method: r.method, path: `${base}/${r.tail}`, spec: r.spec }))),
  { method: 'POST', path: 'CredentialReveal/:revealTokenId/reveal', spec: OW.reveal },





  { method: 'GET', path: 'realtime/sse', spec: REALTIME_SPECS.sse },
  { method: 'POST', path: 'realtime/token', spec: REALTIME_SPECS.token },

  { method: 'POST', path: 'operations/:operation', spec: notFoundSpec('Operation.Unknown', 'no custom operation with this name') },

  // Quotas (CONTRACT: Usage and quotas): by path project id, or by the scope headers under /api/usage.
  { method: 'GET', path: 'Usage/:projectId/quotas', spec: Q.list },
  { method: 'POST', path: 'Usage/:projectId/quotas', spec: Q.create },
  { method: 'GET', path: 'Usage/:projectId/quotas/:quotaId', spec: Q.read },
  { method: 'PUT', path: 'Usage/:projectId/quotas/:quotaId', spec: Q.replace },
  { method: 'PATCH', path: 'Usage/:projectId/quotas/:quotaId', spec: Q.patchByPath },
  { method: 'DELETE', path: 'Usage/:projectId/quotas/:quotaId', spec: Q.delete },
  { method: 'GET', path: 'Usage/:projectId/summary', spec: Q.summary },
  { method: 'GET', path: 'usage/quotas', spec: Q.scopedList },
  { method: 'POST', path: 'usage/quotas', spec: Q.scopedCreate },
  { method: 'GET', path: 'usage/quotas/:quotaId', spec: Q.scopedRead },
  { method: 'PUT', path: 'usage/quotas/:quotaId', spec: Q.scopedReplace },
  { method: 'PATCH', path: 'usage/quotas/:quotaId', spec: Q.scopedPatch },
  { method: 'DELETE', path: 'usage/quotas/:quotaId', spec: Q.scopedDelete },
  { method: 'GET', path: 'usage/summary', spec: Q.scopedSummary },

  { method: 'GET', path: 'audit', spec: AUDIT_SPECS.list },
  { method: 'GET', path: 'audit/tail', spec: AUDIT_SPECS.tail },

  // Usage metering (docs/usage.md); quotas and summary are registered next to these.
  { method: 'GET', path: 'Usage/:projectId/events', spec: USAGE_SPECS.events },
  { method: 'GET', path: 'Usage/:projectId/rollups', spec: USAGE_SPECS.rollups },
  { method: 'GET', path: 'usage/events', spec: USAGE_SPECS.scopedEvents },
  { method: 'GET', path: 'usage/rollups', spec: USAGE_SPECS.scopedRollups },

  // Explainability (POST Explainability/access is registered with row policy).
  { method: 'GET', path: 'Explainability/access', spec: EXPLAIN_ACCESS_READ_SPEC },
  { method: 'GET', path: 'Explainability/access/read', spec: EXPLAIN_ACCESS_READ_SPEC },
  { method: 'POST', path: 'Explainability/readPlan', spec: EXPLAIN_READ_PLAN_SPEC },
  { method: 'GET', path: 'Explainability/apiSurface', spec: EXPLAIN_API_SURFACE_SPEC },
  { method: 'GET', path: 'Explainability/surface', spec: XP.surface },
  { method: 'GET', path: 'Explainability/publication/latest', spec: XP.latest },
  { method: 'GET', path: 'Explainability/publication/:publicationVersion', spec: XP.version },
  { method: 'GET', path: 'Explainability/projectRuntime', spec: XP.projectRuntime },
  { method: 'GET', path: 'Explainability/project-runtime', spec: XP.projectRuntime },
  { method: 'GET', path: 'Explainability/authoredPublication', spec: XP.authoredPublication },

  { method: 'GET', path: 'webhooks/receivers', spec: INBOUND_WEBHOOK_SPECS.list },
  { method: 'POST', path: 'webhooks/receivers', spec: INBOUND_WEBHOOK_SPECS.create },
  { method: 'GET', path: 'webhooks/receivers/:id', spec: INBOUND_WEBHOOK_SPECS.read },
  { method: 'PUT', path: 'webhooks/receivers/:id', spec: INBOUND_WEBHOOK_SPECS.update },
  { method: 'DELETE', path: 'webhooks/receivers/:id', spec: INBOUND_WEBHOOK_SPECS.delete },
  { method: 'GET', path: 'webhooks/diagnostics', spec: WEBHOOK_DIAGNOSTICS_SPECS.diagnostics },
  // Public: signature-verified over the raw body, no bearer.
  { method: 'POST', path: 'webhooks/inbound/:publicReceiverKey', spec: INBOUND_WEBHOOK_SPECS.receive },
];

// router.ts tries literal segments before parameters, so this alias never shadows `webhooks/<name>` routes.
STATIC_ROUTES.push({ method: 'POST', path: 'webhooks/:publicReceiverKey', spec: INBOUND_WEBHOOK_SPECS.receiveAlias });

/** Two routes with one method and path would leave one unreachable: refused when the table loads. */
const seen = new Set<string>();
for (const r of STATIC_ROUTES) {
  const key = `${r.method} ${r.path.replace(/:\w+/g, ':')}`;
  if (seen.has(key)) throw new Error(`route ${r.method} ${r.path} is declared twice`);
  seen.add(key);
}

export { ENTITY_SPECS };
