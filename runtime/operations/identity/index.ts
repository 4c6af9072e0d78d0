import type { DeclaredSpec, OperationSpec } from '../types.js';
import { FEDERATION_SPECS, deleteProviderSpec, federationCallbackSpec, federationStartSpec, listProvidersSpec, putProviderSpec } from './federation.js';
import { createApiKeySpec, deleteApiKeySpec, listApiKeysSpec } from './api-keys.js';
import { createGrantSpec, deleteGrantSpec, listGrantsSpec } from './grants.js';
import { IDENTITY_MANAGEMENT_SPECS } from './identity-management.js';
import { loginSpec, refreshSpec, registerSpec } from './register-login.js';
import { listSessionsSpec, meSpec, revokeSessionSpec } from './sessions.js';
import { MFA_SPECS } from './mfa.js';
import { STEP_UP_SPECS } from './step-up.js';

/**
 * Identity and capability-grant operations, by id. REST routes:
 *   POST   /api/identity/register                              Identity.Register
 *   POST   /api/identity/login                                 Identity.Login
 *   POST   /api/identity/tokens/refresh, /api/identity/refresh Identity.Refresh
 *   GET    /api/identity/me                                    Identity.Me
 *   GET    /api/identity/sessions                              Identity.Sessions.List
 *   DELETE /api/identity/sessions/{sessionId}                  Identity.Sessions.Revoke
 *   POST   /api/projects/{projectId}/capability-grants         Projects.CapabilityGrants.Create
 *   GET    /api/projects/{projectId}/capability-grants         Projects.CapabilityGrants.List
 *   DELETE /api/projects/{projectId}/capability-grants/{grantId} Projects.CapabilityGrants.Delete
 *   federation (OIDC) routes: see ./federation.ts
 *   GET    /api/IdentityManagement/subjects                    IdentityManagement.Subjects.List
 *   GET    /api/IdentityManagement/subjects/{id}               IdentityManagement.Subjects.Read
 *   PUT    /api/IdentityManagement/subjects/{id}/claims        IdentityManagement.Subjects.PutClaims
 *   POST   /api/IdentityManagement/subjects/{id}/deactivate    IdentityManagement.Subjects.Deactivate
 *   GET    /api/IdentityManagement/memberships                 IdentityManagement.Memberships.List
 *   POST   /api/projects/{projectId}/api-keys                  Projects.ApiKeys.Create
 *   GET    /api/projects/{projectId}/api-keys                  Projects.ApiKeys.List
 *   DELETE /api/projects/{projectId}/api-keys/{id}             Projects.ApiKeys.Delete
 */
export const IDENTITY_SPECS = {
  'Identity.Register': registerSpec,
  'Identity.Login': loginSpec,
  'Identity.Refresh': refreshSpec,
  'Identity.Me': meSpec,
  'Identity.Sessions.List': listSessionsSpec,
  'Identity.Sessions.Revoke': revokeSessionSpec,
  'Projects.CapabilityGrants.Create': createGrantSpec,
  'Projects.CapabilityGrants.List': listGrantsSpec,
  'Projects.CapabilityGrants.Delete': deleteGrantSpec,
  ...FEDERATION_SPECS,
  ...IDENTITY_MANAGEMENT_SPECS,
  'Projects.ApiKeys.Create': createApiKeySpec,
  'Projects.ApiKeys.List': listApiKeysSpec,
  'Projects.ApiKeys.Delete': deleteApiKeySpec,
} as const satisfies Record<string, OperationSpec>;

/** The declared identity operations, in the order the OpenAPI document lists them (runtime/operations/catalog.ts). */
export const IDENTITY_OPERATIONS: readonly DeclaredSpec[] = [
  registerSpec, loginSpec, refreshSpec, meSpec, listSessionsSpec, revokeSessionSpec, federationStartSpec, federationCallbackSpec,
  ...Object.values(IDENTITY_MANAGEMENT_SPECS),
  listApiKeysSpec, createApiKeySpec, deleteApiKeySpec,
  listGrantsSpec, createGrantSpec, deleteGrantSpec,
  listProvidersSpec, putProviderSpec, deleteProviderSpec,
  ...Object.values(MFA_SPECS), ...Object.values(STEP_UP_SPECS),
];

export type IdentityOperationId = keyof typeof IDENTITY_SPECS;

export { createApiKeySpec, deleteApiKeySpec, listApiKeysSpec };
export { createGrantSpec, deleteGrantSpec, listGrantsSpec, loginSpec, refreshSpec, registerSpec, listSessionsSpec, meSpec, revokeSessionSpec };
export { GRANT_RE, ROLE_RE } from './grants.js';
export { MFA_SPECS, STEP_UP_SPECS };
