/**
 * Schemas of the project identity operations (register, login, refresh, me,
 * sessions, federation; CONTRACT "Identity", docs/identity.md), referred to
 * by their contracts in register-login.ts, sessions.ts and federation.ts.
 *
 * Input schemas check what they can check exactly as the handlers did
 * (same reason codes and fields, contract `reasons`); what a schema cannot
 * say the same way (an address as normalizeEmail reads it, password length
 * in UTF-16 units) stays in the handler and is only described here.
 */
import { dateTimeSchema, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';

/** UUID_RE (runtime/identity/keys.ts) as a pattern: ajv's `uuid` format also takes a `urn:uuid:` prefix, which the handlers refuse. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const uuidInput = (description?: string): Json => ({ type: 'string', pattern: UUID_PATTERN, ...(description === undefined ? {} : { description }) });

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });

/**
 * `{ data, meta }` and `{ data: [], page, meta }` (runtime/operations/envelopes.ts) with
 * `meta` and `page` written out: the shared `Meta`/`Page` components are not registered
 * schemas, and the answer check resolves `$ref`s against registered ones only.
 */
const META: Json = { type: 'object', required: ['correlationId'], properties: { correlationId: str('Same value as the `X-Service-Correlation-Id` header.') } };
const PAGE: Json = {
  type: 'object', required: ['number', 'size'],
  properties: {
    number: { type: 'integer', minimum: 1, description: 'Page number, 1-indexed.' },
    size: { type: 'integer', minimum: 0 },
    next: { type: ['string', 'null'], description: 'Opaque cursor of the next page (pass as `cursor`).' },
  },
};
export const singleOf = (data: Json): Json => ({ type: 'object', required: ['data', 'meta'], properties: { data, meta: META } });
export const listOf = (item: Json): Json => ({ type: 'object', required: ['data', 'page', 'meta'], properties: { data: { type: 'array', items: item }, page: PAGE, meta: META } });

/** `{ surface, state, correlationId, data }`, the control-plane envelope (envelopes.ts `control`). */
export const controlOf = (surface: string, state: string, data: Json): Json => ({
  type: 'object', required: ['surface', 'state', 'correlationId', 'data'],
  properties: { surface: { type: 'string', const: surface }, state: { type: 'string', const: state }, correlationId: str('Same value as the `X-Service-Correlation-Id` header.'), data },
});

/** normalizeEmail's test (body.ts) as a pattern: surrounding white space allowed, 3 to 254 characters, a local part of at most 64. */
const EMAIL_PATTERN = '^\\s*(?=\\S{3,254}\\s*$)[^\\s@"(),:;<>[\\\\\\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+\\s*$';

const STRENGTH: Json = { type: 'string', enum: ['password', 'mfa-totp', 'mfa-webauthn'], description: 'How strongly the token was authenticated: `password`, or a step-up strength while its elevation lasts.' };

export const IDENTITY_SCHEMAS = defineSchemas({
  IdentityCredentials: {
    type: 'object', required: ['email', 'password'], additionalProperties: false,
    properties: {
      email: { type: 'string', description: 'An e-mail address (`local@domain.tld`, at most 254 characters), compared trimmed and lower-cased.' },
      password: { type: 'string', format: 'password', description: 'Register: 8 to 256 UTF-16 code units (else 422 `Identity.WeakPassword`). Login: any string; a wrong one answers 401.' },
    },
  },
  // Register's body: the address must also look like one (normalizeEmail, body.ts, has the last word: it counts UTF-16 units).
  IdentityRegisterInput: {
    type: 'object', required: ['email', 'password'], additionalProperties: false,
    properties: {
      email: { type: 'string', pattern: EMAIL_PATTERN, description: 'An e-mail address (`local@domain.tld`, at most 254 characters, local part at most 64); stored trimmed and lower-cased.' },
      password: { type: 'string', format: 'password', description: '8 to 256 UTF-16 code units.' },
    },
  },
  IdentityRegistered: singleOf({
    type: 'object', required: ['subjectId', 'email'],
    properties: { subjectId: uuidSchema(), email: str('The address as stored: trimmed and lower-cased.') },
  }),
  IdentityRefreshInput: { type: 'object', required: ['refreshToken'], additionalProperties: false, properties: { refreshToken: str() } },
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
  IdentityMe: singleOf({
    oneOf: [
      {
        type: 'object', description: 'A project user.',
        required: ['kind', 'subjectId', 'email', 'projectId', 'roles', 'sessionId', 'strength'],
        properties: {
          kind: { type: 'string', const: 'user' },
          subjectId: str(),
          email: { type: ['string', 'null'], description: 'Null for a federated subject whose provider sent no e-mail claim.' },
          projectId: str(),
          roles: { type: 'array', items: str() },
          sessionId: { type: ['string', 'null'] },
          strength: STRENGTH,
        },
      },
      {
        type: 'object', description: 'The platform admin or an API key: no subject.',
        required: ['kind', 'label', 'roles'],
        properties: { kind: { type: 'string', enum: ['admin', 'apikey'] }, label: str(), roles: { type: 'array', items: str() } },
      },
    ],
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
  IdentitySessionList: singleOf({ type: 'array', items: ref('IdentitySession') }),
  IdentityFederationStartInput: {
    type: 'object', required: ['provider'], additionalProperties: false,
    properties: {
      provider: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$', description: 'Name of an identity provider configured for the project.' },
      // Not typed here: the operation compares it with the provider's after finding the provider (404 first), as before.
      redirectUri: { description: 'A string, optional; when given it must be the redirect URI configured for the provider (else 422 `Federation.RedirectUriMismatch`).' },
    },
  },
  IdentityFederationStarted: singleOf({
    type: 'object',
    required: ['url', 'authorizationUrl', 'state'],
    properties: {
      url: str('Where to send the browser: the provider\'s authorization endpoint with PKCE (S256), nonce and state.'),
      authorizationUrl: str('Same as `url`.'),
      state: str('Single use, valid 10 minutes; comes back on the redirect and goes to `/identity/federation/callback`.'),
    },
  }),
  IdentityFederationCallbackInput: {
    type: 'object', required: ['provider', 'code', 'state'], additionalProperties: false,
    properties: {
      provider: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$' },
      code: { type: 'string', minLength: 1, maxLength: 2048, description: 'The `code` query parameter of the redirect.' },
      state: { type: 'string', minLength: 1, maxLength: 512, description: 'The `state` query parameter of the redirect.' },
    },
  },
});
