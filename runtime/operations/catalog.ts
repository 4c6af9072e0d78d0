import { BRANCH_SPECS } from './control/branches.js';
import { HEALTH_SPECS } from './control/health.js';
import { DISCOVERY_SPECS } from './control/discovery.js';
import { TENANT_SPECS } from './control/tenants.js';
import { PROJECT_SPECS } from './control/projects.js';
import { GOVERNANCE_SPECS } from './control/governance.js';
import { AUTHORED_OPERATION_SPEC } from './authored/spec.js';
import { GRAPHQL_SCHEMA_SPEC } from './graphql/schema-sdl.js';
import { GRAPHQL_REQUEST_SPEC } from './graphql/request.js';
import { GRAPHQL_PLAYGROUND_SPECS } from './graphql/playground.js';
import { GRPC_PROTO_SPEC } from './grpc/proto.js';
import { SANDBOX_SPECS } from './control/sandboxes.js';
import { QUOTA_SPECS, USAGE_SPECS } from './usage/index.js';
import { EXPLAIN_ACCESS_READ_SPEC } from './explainability/access-read.js';
import { accessPostSpec } from './explainability/access-post.js';
import { EXPLAIN_READ_PLAN_SPEC } from './explainability/read-plan.js';
import { EXPLAIN_API_SURFACE_SPEC } from './explainability/api-surface.js';
import { EXPLAIN_PUBLICATION_SPECS } from './explainability/publication.js';
import { EXPLAIN_AUTHORED_PUBLICATION_SPEC } from './explainability/authored-publication.js';
import { VERSION_SPECS } from './control/version.js';
import { VERSION_WRITE_SPECS } from './control/version-writes.js';
import { ORGANIZATION_SPECS } from './control/organizations.js';
import { ADOPT_TEMPLATE_SPEC, ROOT_PROJECT_SPEC } from './control/records.js';
import { SURFACE_SPECS } from './control/surfaces.js';
import { CONTRACT_PROJECTION_SPECS } from './control/contract-projection.js';
import { INTROSPECTION_SPECS } from './control/introspection.js';
import { PROPOSAL_SPECS } from './control/proposals.js';
import { DEPLOYMENT_SPECS } from './control/deployments.js';
import { SCHEMA_SPECS } from './control/schema.js';
import { HANDLER_SPECS } from './control/handlers.js';
import { SCHEMA_TRANSITION_SPECS } from './control/schema-transition.js';
import { IDENTITY_OPERATIONS } from './identity/index.js';
import { EVENT_SPECS } from './control/events.js';
import { AUDIT_SPECS } from './control/audit.js';
import { CREDENTIAL_REVEAL_SPEC, OUTBOUND_WEBHOOK_SPECS } from './webhooks/outbound.js';
import { REPLAY_SPECS } from './webhooks/replay.js';
import { INBOUND_WEBHOOK_SPECS } from './webhooks/inbound.js';
import { WEBHOOK_DIAGNOSTICS_SPECS } from './webhooks/diagnostics.js';
import { REALTIME_SPECS } from './realtime/index.js';
import { SOURCE_ASSET_SPECS } from './control/source-assets.js';
import { RUN_READ_SPECS } from './scheduling/runs-read.js';
import { TRIGGER_AUDIT_SPECS } from './scheduling/trigger-audit.js';
import { AUTHORED_RUNTIME_SPECS } from './control/authored-runtime.js';
import { DEFINITION_SPECS } from './scheduling/definitions.js';
import { TRIGGER_SPECS } from './scheduling/triggers.js';
import { RUN_ENGINE_SPECS } from './scheduling/runs-trigger.js';
import { ATTEMPT_SPECS } from './scheduling/attempts.js';
import type { DeclaredSpec } from './types.js';

/**
 * Every platform operation with its contract, family by family, in the
 * order the OpenAPI document lists them. The REST route table, request
 * validation, the OpenAPI paths and the CLI descriptor are derived from this
 * list: a family's specs are `DeclaredSpec`s, so one without a contract does
 * not build (docs/architecture.md, "Declaring an operation").
 */
export const PLATFORM_OPERATIONS: readonly DeclaredSpec[] = [
  // Platform: health, discovery documents, tenants, projects, governance, GraphQL and gRPC documents.
  ...Object.values(HEALTH_SPECS),
  ...Object.values(DISCOVERY_SPECS),
  GRAPHQL_SCHEMA_SPEC,
  GRAPHQL_REQUEST_SPEC,
  ...Object.values(GRAPHQL_PLAYGROUND_SPECS),
  GRPC_PROTO_SPEC,
  ...Object.values(TENANT_SPECS),
  ...Object.values(PROJECT_SPECS),
  ...Object.values(GOVERNANCE_SPECS),
  AUTHORED_OPERATION_SPEC,


  // Identity: sessions, federation, step-up, identity management, API keys, capability grants, identity providers.
  ...IDENTITY_OPERATIONS,


  // Branches and sandboxes.
  ...Object.values(BRANCH_SPECS),
  ...Object.values(SANDBOX_SPECS),


  // Proposals and deployments.
  ...Object.values(PROPOSAL_SPECS),
  ...Object.values(DEPLOYMENT_SPECS),


  // Schema: entities, journal, migrations, snapshots, transitions.
  ...Object.values(SCHEMA_SPECS),
  ...Object.values(HANDLER_SPECS),
  ...Object.values(SCHEMA_TRANSITION_SPECS),


  // Versioning, records, surfaces, contract projection and introspection.
  ...Object.values(VERSION_SPECS),
  ...Object.values(VERSION_WRITE_SPECS),
  ...Object.values(ORGANIZATION_SPECS),
  ADOPT_TEMPLATE_SPEC,
  ROOT_PROJECT_SPEC,
  ...Object.values(SURFACE_SPECS),
  ...Object.values(CONTRACT_PROJECTION_SPECS),
  ...Object.values(INTROSPECTION_SPECS),


  // Events, webhooks (outbound, inbound, diagnostics, replay), realtime, audit.
  ...Object.values(EVENT_SPECS),
  ...Object.values(REPLAY_SPECS),
  ...Object.values(OUTBOUND_WEBHOOK_SPECS),
  CREDENTIAL_REVEAL_SPEC,
  ...Object.values(INBOUND_WEBHOOK_SPECS),
  ...Object.values(WEBHOOK_DIAGNOSTICS_SPECS),
  REALTIME_SPECS.connect,
  REALTIME_SPECS.sse,
  REALTIME_SPECS.token,
  ...Object.values(AUDIT_SPECS),


  // Usage, quotas, explainability.
  ...Object.values(USAGE_SPECS),
  ...Object.values(QUOTA_SPECS),
  EXPLAIN_ACCESS_READ_SPEC,
  accessPostSpec,
  EXPLAIN_READ_PLAN_SPEC,
  EXPLAIN_API_SURFACE_SPEC,
  EXPLAIN_PUBLICATION_SPECS.surface,
  EXPLAIN_PUBLICATION_SPECS.latest,
  EXPLAIN_PUBLICATION_SPECS.version,
  EXPLAIN_PUBLICATION_SPECS.projectRuntime,
  EXPLAIN_AUTHORED_PUBLICATION_SPEC,


  // Authored code: source assets, the runtime (egress, workers).
  ...Object.values(SOURCE_ASSET_SPECS),
  ...Object.values(AUTHORED_RUNTIME_SPECS),


  // Scheduling: task definitions and their triggers, runs, attempts, the trigger audit.
  ...Object.values(DEFINITION_SPECS),
  ...Object.values(TRIGGER_SPECS),
  ...Object.values(RUN_ENGINE_SPECS),
  ...Object.values(ATTEMPT_SPECS),
  ...Object.values(RUN_READ_SPECS),
  ...Object.values(TRIGGER_AUDIT_SPECS),

];
