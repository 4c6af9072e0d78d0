import { BRANCH_SPECS } from './control/branches.js';
import { SANDBOX_SPECS } from './control/sandboxes.js';
import { EVENT_SPECS } from './control/events.js';
import { AUDIT_SPECS } from './control/audit.js';
import { CREDENTIAL_REVEAL_SPEC, OUTBOUND_WEBHOOK_SPECS } from './webhooks/outbound.js';
import { REPLAY_SPECS } from './webhooks/replay.js';
import { INBOUND_WEBHOOK_SPECS } from './webhooks/inbound.js';
import { WEBHOOK_DIAGNOSTICS_SPECS } from './webhooks/diagnostics.js';
import { REALTIME_SPECS } from './realtime/index.js';
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


  // Identity: sessions, federation, step-up, identity management, API keys, capability grants, identity providers.


  // Branches and sandboxes.
  ...Object.values(BRANCH_SPECS),
  ...Object.values(SANDBOX_SPECS),


  // Proposals and deployments.


  // Schema: entities, journal, migrations, snapshots, transitions.


  // Versioning, records, surfaces, contract projection and introspection.


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


];
