/**
 * The non-entity routes of a project's REST surface that the document also
 * describes: identity entrypoint here; API keys in openapi-api-keys.ts; the
 * others assembled with them below. The event log, webhooks, realtime and
 * audit are declared operations (runtime/operations/catalog.ts).
 */
import type { StaticOp } from './openapi-static-op.js';
import {
  correlationHeaders, dateTimeSchema, errorResponses, headerRef, jsonContent, paramRef, schemaRef, scopeHeaderParams,
  scopeOnlySecurity, singleEnvelope, type Json,
} from './openapi-components.js';
import { API_KEY_OPS, API_KEY_SCHEMA_NAMES, apiKeyParameters, apiKeySchemas } from './openapi-api-keys.js';
import { STEP_UP_OPS, STEP_UP_SCHEMA_NAMES, stepUpParameters, stepUpSchemas } from './openapi-step-up.js';
import {
  IDENTITY_MANAGEMENT_OPS, IDENTITY_MANAGEMENT_SCHEMA_NAMES, IDENTITY_MANAGEMENT_TAGS, identityManagementParameters, identityManagementSchemas,
} from './openapi-identity-management.js';

export const STATIC_SCHEMA_NAMES = [
  'IdentityCredentials', 'IdentityRegistered', 'IdentityRefreshInput', 'IdentityTokens', 'IdentityMe', 'IdentitySession',
  'IdentitySessionList', 'IdentityFederationStartInput', 'IdentityFederationStarted', 'IdentityFederationCallbackInput',
  ...IDENTITY_MANAGEMENT_SCHEMA_NAMES, ...API_KEY_SCHEMA_NAMES, ...STEP_UP_SCHEMA_NAMES,
] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });

export function staticSchemas(): Json {
  return {
    IdentityCredentials: {
      type: 'object',
      required: ['email', 'password'],
      properties: { email: { type: 'string', format: 'email' }, password: { type: 'string', format: 'password', minLength: 1 } },
    },
    IdentityRegistered: singleEnvelope({
      type: 'object', required: ['subjectId', 'email'], properties: { subjectId: str(), email: { type: 'string', format: 'email' } },
    }),
    IdentityRefreshInput: { type: 'object', required: ['refreshToken'], properties: { refreshToken: str() } },
    // Top level, not in the `data` envelope (CONTRACT: Identity).
    IdentityTokens: {
      type: 'object',
      required: ['accessToken', 'refreshToken', 'expiresAt', 'sessionId'],
      properties: {
        accessToken: str('JWT for `Authorization: Bearer`; valid only for this project.'),
        refreshToken: str('Single-use; exchange at `/identity/tokens/refresh`.'),
        expiresAt: { ...dateTimeSchema(), description: 'Expiry of the access token (ISO 8601 UTC).' },
        sessionId: str(),
      },
    },
    IdentityMe: singleEnvelope({
      type: 'object',
      required: ['subjectId', 'email', 'projectId', 'roles'],
      properties: {
        subjectId: str(),
        email: { type: ['string', 'null'], format: 'email', description: 'Null for a federated subject whose provider sent no e-mail claim.' },
        projectId: str(),
        roles: { type: 'array', items: str() },
        strength: { type: 'string', enum: ['password', 'mfa-totp', 'mfa-webauthn'], description: 'How strongly the token was authenticated: `password`, or a step-up strength while its elevation lasts.' },
      },
    }),
    IdentitySession: {
      type: 'object',
      required: ['id', 'createdAt', 'lastRefreshedAt', 'expiresAt', 'revokedAt', 'current'],
      properties: {
        id: str(),
        createdAt: dateTimeSchema(),
        lastRefreshedAt: dateTimeSchema(),
        expiresAt: dateTimeSchema(),
        revokedAt: { type: ['string', 'null'], format: 'date-time' },
        current: { type: 'boolean', description: 'Whether this is the session of the calling token.' },
      },
    },
    IdentitySessionList: {
      type: 'object',
      required: ['data', 'meta'],
      properties: { data: { type: 'array', items: schemaRef('IdentitySession') }, meta: schemaRef('Meta') },
    },
    IdentityFederationStartInput: {
      type: 'object',
      required: ['provider'],
      additionalProperties: false,
      properties: {
        provider: str('Name of an identity provider configured for the project.'),
        redirectUri: str('Optional; when given it must be the redirect URI configured for the provider.'),
      },
    },
    IdentityFederationStarted: singleEnvelope({
      type: 'object',
      required: ['url', 'authorizationUrl', 'state'],
      properties: {
        url: str('Where to send the browser: the provider\'s authorization endpoint with PKCE (S256), nonce and state.'),
        authorizationUrl: str('Same as `url`.'),
        state: str('Single use, valid 10 minutes; comes back on the redirect and goes to `/identity/federation/callback`.'),
      },
    }),
    IdentityFederationCallbackInput: {
      type: 'object',
      required: ['provider', 'code', 'state'],
      additionalProperties: false,
      properties: { provider: str(), code: str('The `code` query parameter of the redirect.'), state: str('The `state` query parameter of the redirect.') },
    },
    ...apiKeySchemas(),
    ...stepUpSchemas(),
    ...identityManagementSchemas(),
  };
}

export function staticParameters(): Json {
  return {
    SessionId: { name: 'sessionId', in: 'path', required: true, description: 'Session id.', schema: { type: 'string' } },
    ...apiKeyParameters(),
    ...stepUpParameters(),
    ...identityManagementParameters(),
  };
}

const STATIC_OPS: StaticOp[] = [
  { method: 'post', path: '/identity/register', operationId: 'Identity.Register', tag: 'Identity', summary: 'Register a project user (open unless a project setting closes it)', open: true, body: 'IdentityCredentials', status: 201, response: 'IdentityRegistered', errors: [400, 403, 409, 422, 429] },
  { method: 'post', path: '/identity/login', operationId: 'Identity.Login', tag: 'Identity', summary: 'Log in with email and password', open: true, body: 'IdentityCredentials', status: 200, response: 'IdentityTokens', errors: [400, 401, 422, 429] },
  { method: 'post', path: '/identity/tokens/refresh', operationId: 'Identity.Refresh', tag: 'Identity', summary: 'Exchange a refresh token for new tokens', open: true, body: 'IdentityRefreshInput', status: 200, response: 'IdentityTokens', errors: [400, 401, 422, 429] },
  { method: 'post', path: '/identity/refresh', operationId: 'Identity.RefreshAlias', tag: 'Identity', summary: 'Alias of /identity/tokens/refresh', open: true, body: 'IdentityRefreshInput', status: 200, response: 'IdentityTokens', errors: [400, 401, 422, 429] },
  { method: 'get', path: '/identity/me', operationId: 'Identity.Me', tag: 'Identity', summary: 'The calling actor', status: 200, response: 'IdentityMe', errors: [400, 401] },
  { method: 'get', path: '/identity/sessions', operationId: 'Identity.Sessions.List', tag: 'Identity', summary: 'Sessions of the calling subject', status: 200, response: 'IdentitySessionList', errors: [400, 401] },
  { method: 'delete', path: '/identity/sessions/{sessionId}', operationId: 'Identity.Sessions.Revoke', tag: 'Identity', summary: 'Revoke a session of the calling subject', params: ['SessionId'], status: 204, errors: [400, 401, 403, 404] },
  { method: 'post', path: '/identity/federation/start', operationId: 'Identity.Federation.Start', tag: 'Identity', summary: 'Start an OpenID Connect login with a provider configured for the project', open: true, body: 'IdentityFederationStartInput', status: 200, response: 'IdentityFederationStarted', noStore: true, errors: [400, 404, 422] },
  { method: 'post', path: '/identity/federation/callback', operationId: 'Identity.Federation.Callback', tag: 'Identity', summary: 'Finish an OpenID Connect login: exchange the code, verify the ID token, open a session', open: true, body: 'IdentityFederationCallbackInput', status: 200, response: 'IdentityTokens', noStore: true, errors: [400, 401, 404, 422] },
];

function security(s: StaticOp): Json[] | undefined {
  if (s.open === true) return scopeOnlySecurity();
  if (s.auth === 'public') return [];
  if (s.auth === 'admin') return [s.unscoped === true ? { adminToken: [] } : { adminToken: [], tenantHeader: [], projectHeader: [] }];
  // Scope from elsewhere (the realtime handshake's query or subscription token): any credential alone.
  if (s.unscoped === true) return ['bearerAuth', 'apiKey', 'adminToken'].map((k) => ({ [k]: [] }));
  return undefined;
}

function successResponse(s: StaticOp): Json {
  if (s.upgrade === true) {
    return {
      description: 'Switching Protocols: the connection is upgraded to a WebSocket; the message protocol is described in docs/realtime.md.',
      headers: {
        Upgrade: { description: '`websocket`.', schema: { type: 'string' } },
        'Sec-WebSocket-Protocol': { description: 'The offered `bearer.<token>` protocol, echoed when it carried the credential.', schema: { type: 'string' } },
      },
    };
  }
  const headers = s.noStore === true ? { ...correlationHeaders(), 'Cache-Control': { description: '`no-store`.', schema: { type: 'string' } } } : correlationHeaders();
  if (s.stream === true) {
    const media: Json = { schema: { type: 'string' } };
    if (s.sse !== undefined) Object.assign(media, { 'x-sse-event': s.sse.event, 'x-sse-data': schemaRef(s.sse.data) });
    const what = s.sse === undefined ? '' : `: \`event: ${s.sse.event}\`, \`id:\` a resumable position, \`data:\` a ${s.sse.data} as JSON`;
    return { description: `A stream of Server-Sent Events${what}.`, headers, content: { 'text/event-stream': media } };
  }
  if (s.response === undefined) return { description: 'No content.', headers };
  return { description: s.status === 202 ? 'Accepted.' : 'Success.', headers, content: jsonContent(schemaRef(s.response)) };
}

function notModifiedResponse(): Json {
  return { '304': { description: 'Not Modified: `If-None-Match` named the current `ETag`; no body.', headers: { ...correlationHeaders(), ETag: headerRef('ETag') } } };
}

/** Path items of the static routes, in a fixed order. */
export function staticPaths(): Array<{ path: string; method: string; operation: Json }> {
  return [
    ...STATIC_OPS,

    ...IDENTITY_MANAGEMENT_OPS,

    ...API_KEY_OPS,

    ...STEP_UP_OPS,

  ].map((s) => {
    const op: Json = { operationId: s.operationId, tags: [s.tag], summary: s.summary };
    if (s.description !== undefined) op.description = s.description;
    const sec = security(s);
    if (sec !== undefined) op.security = sec;
    op.parameters = [...(s.params ?? []).map(paramRef), ...(s.unscoped === true ? [] : scopeHeaderParams())];
    if (s.body !== undefined) op.requestBody = { required: true, content: jsonContent(schemaRef(s.body)) };
    op.responses = { [String(s.status)]: successResponse(s), ...(s.conditional === true ? notModifiedResponse() : {}), ...errorResponses(s.errors) };
    return { path: s.path, method: s.method, operation: op };
  });
}

export const STATIC_TAGS = [
  { name: 'Identity', description: 'Project identity: registration, login, tokens, sessions.' },
  ...IDENTITY_MANAGEMENT_TAGS,
];
