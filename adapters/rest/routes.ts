import { ENTITY_SPECS } from '../../runtime/operations/entity/index.js';
import { IDENTITY_SPECS, MFA_SPECS, STEP_UP_SPECS } from '../../runtime/operations/identity/index.js';
import type { OperationSpec } from '../../runtime/operations/types.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A fixed route: path segments after the base, `:name` captures a parameter. */
export interface StaticRoute {
  method: Method;
  path: string;
  spec: OperationSpec;
}

const I = IDENTITY_SPECS as Record<string, OperationSpec>;

/** The routes of declared operations, as their contracts name them (runtime/operations/catalog.ts). */
// A WebSocket upgrade (Realtime.Connect) is registered by the realtime adapter (server.ts), not this table.
const DECLARED_ROUTES: StaticRoute[] = PLATFORM_OPERATIONS.filter((spec) => spec.contract.output.upgrade !== true)
  .flatMap((spec) => spec.contract.routes.map((r) => ({ method: r.method, path: r.path, spec })));

/**
 * Every non-entity REST route of the platform. Entity routes are resolved by shape in router.ts.
 * Routes still written here belong to operations not yet declared with a contract (issue 23).
 */
export const STATIC_ROUTES: StaticRoute[] = [
  ...DECLARED_ROUTES,
  { method: 'GET', path: 'projects/:projectId/capability-grants', spec: I['Projects.CapabilityGrants.List']! },
  { method: 'POST', path: 'projects/:projectId/capability-grants', spec: I['Projects.CapabilityGrants.Create']! },
  { method: 'DELETE', path: 'projects/:projectId/capability-grants/:grantId', spec: I['Projects.CapabilityGrants.Delete']! },
  { method: 'GET', path: 'projects/:projectId/identity/providers', spec: I['Projects.IdentityProviders.List']! },
  { method: 'PUT', path: 'projects/:projectId/identity/providers/:name', spec: I['Projects.IdentityProviders.Put']! },
  { method: 'DELETE', path: 'projects/:projectId/identity/providers/:name', spec: I['Projects.IdentityProviders.Delete']! },
  { method: 'GET', path: 'projects/:projectId/api-keys', spec: I['Projects.ApiKeys.List']! },
  { method: 'POST', path: 'projects/:projectId/api-keys', spec: I['Projects.ApiKeys.Create']! },
  { method: 'DELETE', path: 'projects/:projectId/api-keys/:id', spec: I['Projects.ApiKeys.Delete']! },



  { method: 'POST', path: 'identity/register', spec: I['Identity.Register']! },
  { method: 'POST', path: 'identity/login', spec: I['Identity.Login']! },
  { method: 'POST', path: 'identity/tokens/refresh', spec: I['Identity.Refresh']! },
  { method: 'POST', path: 'identity/refresh', spec: I['Identity.Refresh']! },
  { method: 'GET', path: 'identity/me', spec: I['Identity.Me']! },
  { method: 'GET', path: 'identity/sessions', spec: I['Identity.Sessions.List']! },
  { method: 'DELETE', path: 'identity/sessions/:sessionId', spec: I['Identity.Sessions.Revoke']! },
  { method: 'POST', path: 'identity/federation/start', spec: I['Identity.Federation.Start']! },
  { method: 'POST', path: 'identity/federation/callback', spec: I['Identity.Federation.Callback']! },

  // Step-up (docs/identity.md "Step-up"): second-factor enrolment and challenges.
  { method: 'POST', path: 'identity/mfa/totp', spec: MFA_SPECS['Identity.Mfa.Totp.Enrol'] },
  { method: 'POST', path: 'identity/mfa/totp/confirm', spec: MFA_SPECS['Identity.Mfa.Totp.Confirm'] },
  { method: 'POST', path: 'identity/mfa/webauthn/registration/options', spec: MFA_SPECS['Identity.Mfa.WebAuthn.RegistrationOptions'] },
  { method: 'POST', path: 'identity/mfa/webauthn/registration/verify', spec: MFA_SPECS['Identity.Mfa.WebAuthn.RegistrationVerify'] },
  { method: 'POST', path: 'identity/challenges', spec: STEP_UP_SPECS['Identity.Challenges.Create'] },
  { method: 'POST', path: 'identity/challenges/:challengeId/complete', spec: STEP_UP_SPECS['Identity.Challenges.Complete'] },
  { method: 'POST', path: 'identity/challenge/start', spec: STEP_UP_SPECS['Identity.Challenge.Start'] },
  { method: 'POST', path: 'identity/challenge/verify', spec: STEP_UP_SPECS['Identity.Challenge.Verify'] },


  { method: 'GET', path: 'IdentityManagement/subjects', spec: I['IdentityManagement.Subjects.List']! },
  { method: 'GET', path: 'IdentityManagement/subjects/:id', spec: I['IdentityManagement.Subjects.Read']! },
  { method: 'PUT', path: 'IdentityManagement/subjects/:id/claims', spec: I['IdentityManagement.Subjects.PutClaims']! },
  { method: 'POST', path: 'IdentityManagement/subjects/:id/deactivate', spec: I['IdentityManagement.Subjects.Deactivate']! },
  { method: 'GET', path: 'IdentityManagement/memberships', spec: I['IdentityManagement.Memberships.List']! },


];

/** Two routes with one method and path would leave one unreachable: refused when the table loads. */
const seen = new Set<string>();
for (const r of STATIC_ROUTES) {
  const key = `${r.method} ${r.path.replace(/:\w+/g, ':')}`;
  if (seen.has(key)) throw new Error(`route ${r.method} ${r.path} is declared twice`);
  seen.add(key);
}

export { ENTITY_SPECS };
