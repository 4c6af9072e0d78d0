/**
 * Identity federation (OpenID Connect, authorization-code flow with PKCE):
 *   PUT    /api/projects/{projectId}/identity/providers/{name}  admin: configure a provider
 *   GET    /api/projects/{projectId}/identity/providers         admin: list (no secrets)
 *   DELETE /api/projects/{projectId}/identity/providers/{name}  admin
 *   POST   /api/identity/federation/start     { provider, redirectUri? } → { url, authorizationUrl, state }
 *   POST   /api/identity/federation/callback  { provider, code, state }  → login's token pair
 * Decisions in docs/identity.md "Federation (OIDC)".
 */
import { notFound, ServiceError, unauthorized, validationFailed } from '../../errors/service-error.js';
import {
  authorizationUrl,
  checkProviderUrl,
  discover,
  exchangeCode,
  forgetDiscovery,
  newAuthorizationSecrets,
  verifyIdToken,
  type OidcClient,
  deleteProvider,
  listProviders,
  providerRecord,
  provisionSubject,
  readProvider,
  saveState,
  takeState,
  upsertProvider,
  type ProviderRow,
  identityPolicy,
} from '../../identity/index.js';
import type { SecretStore } from '../../secrets/index.js';
import { noContent, single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { normalizeEmail } from './email.js';
import { identityContract } from './contract.js';
import { IDENTITY_SCHEMAS as S } from './identity-schemas.js';
import { PROVIDER_SCHEMAS as P } from './provider-schemas.js';
import { pathProject, PROJECT_ID_PARAM } from './grants.js';
import { openSession } from './register-login.js';

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const SCOPE_RE = /^[\x21\x23-\x5B\x5D-\x7E]{1,64}$/;
const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

const allowPrivate = (ctx: OperationContext): boolean => identityPolicy(ctx.services).federationAllowPrivateIssuers === true;

/** The platform secret store (it runs with the webhook machinery); without it federation answers 503. */
function secretsOf(ctx: OperationContext): SecretStore {
  const secrets = ctx.services.webhooks?.secrets;
  if (secrets === undefined) throw new ServiceError('UNAVAILABLE', 'Federation.Unavailable', 'the platform secret store is not running on this node');
  return secrets;
}

const providerNotFound = (): ServiceError => notFound('Federation.ProviderNotFound', 'no identity provider with this name in the project');

function providerName(value: unknown, field = 'provider'): string {
  if (typeof value !== 'string' || !NAME_RE.test(value)) throw validationFailed('Federation.InvalidProvider', `${field} must be a provider name (letters, digits, '_' and '-', at most 63)`, field);
  return value;
}

function boundedString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw validationFailed('Federation.InvalidBody', `${field} must be a string of 1 to ${max} characters`, field);
  return value;
}

function redirectUri(value: unknown): string {
  const text = boundedString(value, 'redirectUri', 2048);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw validationFailed('Federation.InvalidUrl', 'redirectUri must be an absolute URL', 'redirectUri');
  }
  if (u.hash !== '') throw validationFailed('Federation.InvalidUrl', 'redirectUri must not have a fragment', 'redirectUri');
  return text;
}

/** `PUT /api/projects/{projectId}/identity/providers/{name}` → 201 created or 200 replaced; never the secret. */
const BY_NAME = { name: { description: 'Provider name (letters, digits, `_` and `-`, at most 63); another answers 422 `Federation.InvalidProvider` (PUT) or 404 (DELETE).' } };
const PROVIDER_FIELD = 'Federation.InvalidBody';

export const putProviderSpec: DeclaredSpec = {
  id: 'Projects.IdentityProviders.Put',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'Configure an OpenID Connect identity provider of the project (201 created, 200 replaced; never answers the secret)',
    description: 'The issuer must be reachable and public (unless the node allows private issuers); `redirectUri` absolute without a fragment. Decisions in docs/identity.md "Federation (OIDC)".',
    routes: [{ method: 'PUT', path: 'projects/:projectId/identity/providers/:name' }], params: { ...PROJECT_ID_PARAM, ...BY_NAME },
    body: P.IdentityProviderInput,
    reasons: { prefix: 'Federation', fields: { issuer: PROVIDER_FIELD } },
    output: { status: 201, alsoStatus: 200, body: P.IdentityProviderSingle },
    errors: [400, 401, 403, 404, 413, 422],
  }),
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const name = providerName(ctx.inv.params.name, 'name');
    // IdentityProviderInput checks unknown properties and the issuer; the fields after it are checked here, after the issuer URL (provider-schemas.ts).
    const body = ctx.inv.body as Record<string, unknown>;
    const issuer = boundedString(body.issuer, 'issuer', 2048);
    await checkProviderUrl(issuer, allowPrivate(ctx), 'issuer');
    const clientId = boundedString(body.clientId, 'clientId', 255);
    const clientSecret = body.clientSecret === undefined ? null : boundedString(body.clientSecret, 'clientSecret', 1024);
    let scopes = DEFAULT_SCOPES;
    if (body.scopes !== undefined) {
      if (!Array.isArray(body.scopes) || body.scopes.length > 20 || !body.scopes.every((s) => typeof s === 'string' && SCOPE_RE.test(s))) {
        throw validationFailed('Federation.InvalidScopes', 'scopes must be an array of at most 20 OAuth scope tokens', 'scopes');
      }
      // `openid` makes it an OIDC request (an ID token comes back); it is always asked for.
      scopes = ['openid', ...new Set((body.scopes as string[]).filter((s) => s !== 'openid'))];
    }
    const saved = await upsertProvider(ctx.services.db, secretsOf(ctx), projectId, name, { issuer, clientId, clientSecret, redirectUri: redirectUri(body.redirectUri), scopes });
    if (saved === null) throw validationFailed('Federation.ClientSecretRequired', 'clientSecret is required when the provider is created', 'clientSecret');
    forgetDiscovery(issuer);
    return single(ctx, providerRecord(saved.row), saved.created ? 201 : 200);
  },
};

/** `GET /api/projects/{projectId}/identity/providers` → 200 the project's providers, by name. */
export const listProvidersSpec: DeclaredSpec = {
  id: 'Projects.IdentityProviders.List',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'List the project\'s identity providers, by name (no secrets)',
    routes: [{ method: 'GET', path: 'projects/:projectId/identity/providers' }], params: PROJECT_ID_PARAM,
    output: { status: 200, body: P.IdentityProviderList },
    errors: [401, 403, 404],
  }),
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    return single(ctx, (await listProviders(ctx.services.db, projectId)).map(providerRecord));
  },
};

/** `DELETE /api/projects/{projectId}/identity/providers/{name}` → 204; pending authorizations of it end. */
export const deleteProviderSpec: DeclaredSpec = {
  id: 'Projects.IdentityProviders.Delete',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'Delete an identity provider of the project; its pending authorizations end',
    routes: [{ method: 'DELETE', path: 'projects/:projectId/identity/providers/:name' }], params: { ...PROJECT_ID_PARAM, ...BY_NAME },
    output: { status: 204 },
    errors: [401, 403, 404],
  }),
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const name = ctx.inv.params.name ?? '';
    if (!NAME_RE.test(name) || !(await deleteProvider(ctx.services.db, projectId, name))) throw providerNotFound();
    return noContent;
  },
};

async function projectProvider(ctx: OperationContext, name: string): Promise<ProviderRow> {
  const row = await readProvider(ctx.services.db, ctx.scope!.project.id, name);
  if (row === undefined) throw providerNotFound();
  return row;
}

/**
 * `POST /api/identity/federation/start` `{ provider, redirectUri? }` →
 * 200 `{ data: { url, authorizationUrl, state, expiresAt } }`. The redirect
 * URI, when given, must be the configured one (no open redirect).
 */
export const federationStartSpec: DeclaredSpec = {
  id: 'Identity.Federation.Start',
  authn: 'public',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Start an OpenID Connect login with a provider configured for the project',
    routes: [{ method: 'POST', path: 'identity/federation/start' }],
    body: S.IdentityFederationStartInput,
    reasons: { prefix: 'Federation', fields: { provider: 'Federation.InvalidProvider' } },
    output: { status: 200, body: S.IdentityFederationStarted, noStore: true },
    errors: [400, 404, 422],
  }),
  async execute(ctx) {
    const body = ctx.inv.body as { provider: string; redirectUri?: unknown };
    const p = await projectProvider(ctx, body.provider);
    if (body.redirectUri !== undefined && body.redirectUri !== p.redirect_uri) {
      throw validationFailed('Federation.RedirectUriMismatch', 'redirectUri must be the one configured for the provider', 'redirectUri');
    }
    const d = await discover(p.issuer, allowPrivate(ctx));
    const s = newAuthorizationSecrets();
    await saveState(ctx.services.db, ctx.scope!.project.id, p.name, s.state, { codeVerifier: s.codeVerifier, nonce: s.nonce, redirectUri: p.redirect_uri });
    const url = authorizationUrl(d, { clientId: p.client_id, redirectUri: p.redirect_uri, scopes: p.scopes.split(' '), state: s.state, nonce: s.nonce, codeChallenge: s.codeChallenge });
    return single(ctx, { url, authorizationUrl: url, state: s.state }, 200, { 'Cache-Control': 'no-store' });
  },
};

const invalidState = (): ServiceError => unauthorized('Federation.InvalidState', 'the state is unknown, already used, expired, or belongs to another project or provider');

/**
 * `POST /api/identity/federation/callback` `{ provider, code, state }` →
 * 200 `{ accessToken, refreshToken, expiresAt, sessionId }` (login's shape).
 * The state is consumed first, so a failed exchange cannot be retried with it.
 */
export const federationCallbackSpec: DeclaredSpec = {
  id: 'Identity.Federation.Callback',
  authn: 'public',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Finish an OpenID Connect login: exchange the code, verify the ID token, open a session',
    routes: [{ method: 'POST', path: 'identity/federation/callback' }],
    body: S.IdentityFederationCallbackInput,
    reasons: { prefix: 'Federation', order: 'properties', fields: { provider: 'Federation.InvalidProvider', code: 'Federation.InvalidBody', state: 'Federation.InvalidBody' } },
    output: { status: 200, body: S.IdentityTokens, noStore: true },
    errors: [400, 401, 404, 422],
  }),
  async execute(ctx) {
    const body = ctx.inv.body as { provider: string; code: string; state: string };
    const name = body.provider;
    // Bounds in UTF-16 units as before; the schema's maxLength counts code points.
    const code = boundedString(body.code, 'code', 2048);
    const state = boundedString(body.state, 'state', 512);
    const project = ctx.scope!.project;
    const p = await projectProvider(ctx, name);
    const pending = await takeState(ctx.services.db, project.id, name, state);
    if (pending === null) throw invalidState();
    const secret = await secretsOf(ctx).get(ctx.services.db, p.secret_id);
    if (secret === null) throw new Error(`identity provider ${name} lost its client secret`);
    const client: OidcClient = { issuer: p.issuer, clientId: p.client_id, clientSecret: secret };
    const priv = allowPrivate(ctx);
    const d = await discover(p.issuer, priv);
    const idToken = await exchangeCode(d, client, { code, redirectUri: pending.redirectUri, codeVerifier: pending.codeVerifier }, priv);
    const claims = await verifyIdToken(d, client, idToken, pending.nonce, priv);
    const email = normalizeEmail(claims.email);
    const { subjectId, active } = await provisionSubject(ctx.services.db, project.id, name, p.issuer, claims.sub, email);
    if (!active) throw unauthorized('Federation.SubjectInactive', 'the account linked to this provider user is not active');
    return openSession(ctx, subjectId);
  },
};

export const FEDERATION_SPECS = {
  'Projects.IdentityProviders.Put': putProviderSpec,
  'Projects.IdentityProviders.List': listProvidersSpec,
  'Projects.IdentityProviders.Delete': deleteProviderSpec,
  'Identity.Federation.Start': federationStartSpec,
  'Identity.Federation.Callback': federationCallbackSpec,
} as const satisfies Record<string, OperationSpec>;
