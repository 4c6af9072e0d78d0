import { BRANCH_SPECS } from './control/branches.js';
import { SANDBOX_SPECS } from './control/sandboxes.js';
import { IDENTITY_OPERATIONS } from './identity/index.js';
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
  ...IDENTITY_OPERATIONS,


  // Branches and sandboxes.
  ...Object.values(BRANCH_SPECS),
  ...Object.values(SANDBOX_SPECS),


  // Proposals and deployments.


  // Schema: entities, journal, migrations, snapshots, transitions.


  // Versioning, records, surfaces, contract projection and introspection.


  // Events, webhooks (outbound, inbound, diagnostics, replay), realtime, audit.


  // Usage, quotas, explainability.


];
