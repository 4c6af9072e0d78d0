/**
 * The relying-party side of OpenID Connect (authorization-code flow with
 * PKCE): discovery, the token request and ID token verification against the
 * provider's JWKS. Only `fetch` and jose; every outbound URL passes the
 * private-address guard of webhooks unless FEDERATION_ALLOW_PRIVATE_ISSUERS.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { ServiceError, unauthorized, validationFailed } from '../errors/service-error.js';
import { checkTarget } from '../webhooks/outbound/url-guard.js';
import { refuseUnstorableIn } from '../storable-text.js';

/** What the platform reads from `<issuer>/.well-known/openid-configuration`. */
export interface OidcDiscovery {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** `client_secret_basic` unless the provider supports only `client_secret_post`. */
  clientAuth: 'basic' | 'post';
}

/** A provider as configured for a project, with its client secret opened. */
export interface OidcClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** Discovery documents are kept this long; keys rotate through the JWKS, which jose refetches on an unknown `kid`. */
const DISCOVERY_TTL_MS = 10 * 60_000;
/** Each outbound request to a provider gives up after this long. */
const REQUEST_TIMEOUT_MS = 10_000;
const MAX_DISCOVERY_ENTRIES = 1_000;

const discoveries = new Map<string, { doc: OidcDiscovery; until: number }>();
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

export const providerUnavailable = (message: string): ServiceError =>
  new ServiceError('UNAVAILABLE', 'Federation.ProviderUnavailable', message, { retryable: true });

/**
 * Checks an issuer (or any provider URL) before the platform sends anything
 * there: https, no credentials, and a public address, unless the operator
 * allowed private issuers (then http and private addresses pass too).
 */
export async function checkProviderUrl(text: string, allowPrivate: boolean, field = 'issuer'): Promise<URL> {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw validationFailed('Federation.InvalidUrl', `${field} must be an absolute https URL`, field);
  }
  const okScheme = u.protocol === 'https:' || (allowPrivate && u.protocol === 'http:');
  if (!okScheme) throw validationFailed('Federation.InvalidUrl', `${field} must use https (http only with FEDERATION_ALLOW_PRIVATE_ISSUERS=true)`, field);
  if (u.username !== '' || u.password !== '' || text.length > 2048) throw validationFailed('Federation.InvalidUrl', `${field} must not carry credentials and stay under 2048 characters`, field);
  try {
    await checkTarget(u, allowPrivate);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    throw validationFailed('Federation.PrivateIssuer', `${field} '${u.hostname}' resolves to a loopback, link-local or private address (or not at all); set FEDERATION_ALLOW_PRIVATE_ISSUERS=true to allow it`, field);
  }
  return u;
}

/** A provider URL that fails the guard at request time is the provider's fault, not the caller's. */
async function guarded(text: string, allowPrivate: boolean, what: string): Promise<URL> {
  try {
    return await checkProviderUrl(text, allowPrivate, what);
  } catch (err) {
    if (err instanceof ServiceError) throw providerUnavailable(`the provider's ${what} is not allowed: ${err.message}`);
    throw err;
  }
}

async function fetchJson(url: URL, init: RequestInit, what: string): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (err) {
    throw providerUnavailable(`the provider's ${what} did not answer (${(err as Error).name})`);
  }
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: res.status, body };
}

const str = (o: Record<string, unknown>, k: string): string | null => (typeof o[k] === 'string' && o[k] !== '' ? o[k] as string : null);

/** The issuer's discovery document (cached 10 min); its `issuer` must be the configured one (OIDC Discovery 4.3). */
export async function discover(issuer: string, allowPrivate: boolean): Promise<OidcDiscovery> {
  const hit = discoveries.get(issuer);
  if (hit !== undefined && hit.until > Date.now()) return hit.doc;
  const url = await guarded(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, allowPrivate, 'issuer');
  const { status, body } = await fetchJson(url, { headers: { accept: 'application/json' } }, 'discovery document');
  if (status !== 200 || typeof body !== 'object' || body === null) throw providerUnavailable(`the provider's discovery document answered ${status}`);
  const d = body as Record<string, unknown>;
  const authorizationEndpoint = str(d, 'authorization_endpoint');
  const tokenEndpoint = str(d, 'token_endpoint');
  const jwksUri = str(d, 'jwks_uri');
  if (str(d, 'issuer') !== issuer || authorizationEndpoint === null || tokenEndpoint === null || jwksUri === null) {
    throw providerUnavailable('the provider\'s discovery document is incomplete or names another issuer');
  }
  const methods = Array.isArray(d.token_endpoint_auth_methods_supported) ? d.token_endpoint_auth_methods_supported : ['client_secret_basic'];
  const clientAuth = !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? 'post' : 'basic';
  const doc: OidcDiscovery = { issuer, authorizationEndpoint, tokenEndpoint, jwksUri, clientAuth };
  if (discoveries.size >= MAX_DISCOVERY_ENTRIES) discoveries.delete(discoveries.keys().next().value!);
  discoveries.set(issuer, { doc, until: Date.now() + DISCOVERY_TTL_MS });
  return doc;
}

/** Forgets a cached discovery document (the provider was reconfigured). */
export function forgetDiscovery(issuer: string): void {
  discoveries.delete(issuer);
}

/** A fresh PKCE pair (RFC 7636, S256), a nonce and a state, each 256 random bits. */
export function newAuthorizationSecrets(): { state: string; nonce: string; codeVerifier: string; codeChallenge: string } {
  const codeVerifier = randomBytes(32).toString('base64url');
  return {
    state: randomBytes(32).toString('base64url'),
    nonce: randomBytes(32).toString('base64url'),
    codeVerifier,
    codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
  };
}

export function authorizationUrl(d: OidcDiscovery, p: { clientId: string; redirectUri: string; scopes: string[]; state: string; nonce: string; codeChallenge: string }): string {
  const u = new URL(d.authorizationEndpoint);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', p.clientId);
  u.searchParams.set('redirect_uri', p.redirectUri);
  u.searchParams.set('scope', p.scopes.join(' '));
  u.searchParams.set('state', p.state);
  u.searchParams.set('nonce', p.nonce);
  u.searchParams.set('code_challenge', p.codeChallenge);
  u.searchParams.set('code_challenge_method', 'S256');
  return u.toString();
}

const codeRejected = (detail: string): ServiceError => unauthorized('Federation.CodeRejected', `the provider refused the authorization code${detail}`);
const invalidIdToken = (why: string): ServiceError => unauthorized('Federation.InvalidIdToken', `the ID token is not valid: ${why}`);

/** Client authentication per RFC 6749 2.3.1 (form-encode each part before Basic). */
const formEncode = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');

/** Exchanges the code (with the PKCE verifier) at the token endpoint; returns the raw ID token. */
export async function exchangeCode(d: OidcDiscovery, c: OidcClient, p: { code: string; redirectUri: string; codeVerifier: string }, allowPrivate: boolean): Promise<string> {
  const url = await guarded(d.tokenEndpoint, allowPrivate, 'token endpoint');
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri, code_verifier: p.codeVerifier });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (d.clientAuth === 'basic') headers.authorization = `Basic ${Buffer.from(`${formEncode(c.clientId)}:${formEncode(c.clientSecret)}`).toString('base64')}`;
  else {
    form.set('client_id', c.clientId);
    form.set('client_secret', c.clientSecret);
  }
  const { status, body } = await fetchJson(url, { method: 'POST', headers, body: form.toString() }, 'token endpoint');
  const b = typeof body === 'object' && body !== null ? body as Record<string, unknown> : {};
  // 400/401 with an OAuth error: the code (or its verifier) is wrong, used or expired.
  if (status === 400 || status === 401) throw codeRejected(typeof b.error === 'string' ? ` (${b.error.slice(0, 64)})` : '');
  if (status !== 200) throw providerUnavailable(`the provider's token endpoint answered ${status}`);
  const idToken = str(b, 'id_token');
  if (idToken === null) throw invalidIdToken('the token response carries no id_token');
  return idToken;
}

function keySet(jwksUri: string, allowPrivate: boolean): ReturnType<typeof createRemoteJWKSet> {
  const key = `${allowPrivate}\u0000${jwksUri}`;
  let set = keySets.get(key);
  if (set === undefined) {
    set = createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: REQUEST_TIMEOUT_MS,
      // Every JWKS fetch (jose refetches on an unknown kid) passes the guard first.
      [customFetch]: async (url: string, init: RequestInit) => {
        await guarded(url, allowPrivate, 'JWKS');
        return fetch(url, { ...init, redirect: 'manual' });
      },
    });
    if (keySets.size >= MAX_DISCOVERY_ENTRIES) keySets.delete(keySets.keys().next().value!);
    keySets.set(key, set);
  }
  return set;
}

/**
 * Verifies the ID token: signature by a key of the provider's JWKS (asymmetric
 * algorithms only), `iss`, `aud` (the client id; `azp` too when there are
 * several audiences), `exp`, and the nonce bound to this state. Returns the claims.
 */
export async function verifyIdToken(d: OidcDiscovery, c: OidcClient, idToken: string, nonce: string, allowPrivate: boolean): Promise<JWTPayload & { sub: string }> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keySet(d.jwksUri, allowPrivate), {
      issuer: c.issuer,
      audience: c.clientId,
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: 30,
    }));
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    if (err instanceof joseErrors.JWKSTimeout) throw providerUnavailable('the provider\'s JWKS did not answer');
    if (err instanceof joseErrors.JOSEError) throw invalidIdToken(err.code);
    throw providerUnavailable(`the provider's JWKS could not be read (${(err as Error).name})`);
  }
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== c.clientId) throw invalidIdToken('azp is not this client');
  if (payload.nonce !== nonce) throw invalidIdToken('nonce mismatch');
  if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > 255) throw invalidIdToken('sub is missing or too long');
  // The claims the platform stores (sub, email) never passed dispatch's input check: 422 naming the claim.
  refuseUnstorableIn({ sub: payload.sub, email: payload.email }, 'id_token');
  return payload as JWTPayload & { sub: string };
}
