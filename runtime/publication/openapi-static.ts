/**
 * The non-entity routes of a project's REST surface that the document also
 * describes: identity entrypoint and the event log.
 */
import {
  correlationHeaders, dateTimeSchema, errorResponses, jsonContent, listEnvelope, paramRef, schemaRef, scopeHeaderParams,
  scopeOnlySecurity, singleEnvelope, type Json,
} from './openapi-components.js';

export const STATIC_SCHEMA_NAMES = [
  'IdentityCredentials', 'IdentityRegistered', 'IdentityRefreshInput', 'IdentityTokens', 'IdentityMe', 'IdentitySession',
  'IdentitySessionList', 'Event', 'EventSingle', 'EventList', 'EventFilter',
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
    IdentityTokens: singleEnvelope({
      type: 'object',
      required: ['accessToken', 'refreshToken', 'expiresAt', 'sessionId'],
      properties: {
        accessToken: str('JWT for `Authorization: Bearer`; valid only for this project.'),
        refreshToken: str('Single-use; exchange at `/identity/tokens/refresh`.'),
        expiresAt: { ...dateTimeSchema(), description: 'Expiry of the access token (ISO 8601 UTC).' },
        sessionId: str(),
      },
    }),
    IdentityMe: singleEnvelope({
      type: 'object',
      required: ['subjectId', 'email', 'projectId', 'roles'],
      properties: { subjectId: str(), email: { type: 'string', format: 'email' }, projectId: str(), roles: { type: 'array', items: str() } },
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
    Event: {
      type: 'object',
      description: 'Event envelope of the platform event log.',
      required: ['id', 'type', 'occurredAt', 'tenantId', 'projectId', 'publicationVersion', 'correlationId', 'data'],
      properties: {
        id: str(),
        type: str('Dotted event type name, e.g. `entity.Order.created`.'),
        occurredAt: dateTimeSchema(),
        tenantId: str(),
        projectId: str(),
        publicationVersion: { type: 'integer', format: 'int64' },
        correlationId: str(),
        data: { type: 'object', description: 'Event-specific fields (entity change events carry identity and changed field names, never values).' },
      },
    },
    EventSingle: singleEnvelope(schemaRef('Event')),
    EventList: listEnvelope(schemaRef('Event')),
    EventFilter: {
      type: 'object',
      description: 'Event filter, sent as JSON in the `filter` query parameter.',
      additionalProperties: false,
      properties: {
        type: str('Event type (exact dotted name).'),
        entity: str('Entity name.'),
        since: { ...dateTimeSchema(), description: 'Events at or after this instant.' },
        until: { ...dateTimeSchema(), description: 'Events before this instant.' },
        correlationId: str(),
      },
    },
  };
}

export function staticParameters(): Json {
  return {
    SessionId: { name: 'sessionId', in: 'path', required: true, description: 'Session id.', schema: { type: 'string' } },
    EventId: { name: 'id', in: 'path', required: true, description: 'Event id.', schema: { type: 'string' } },
    EventFilter: {
      name: 'filter', in: 'query', required: false, description: 'Event filter JSON (`type`, `entity`, `since`, `until`, `correlationId`).',
      schema: { type: 'string', contentMediaType: 'application/json', contentSchema: schemaRef('EventFilter') },
    },
  };
}

interface StaticOp {
  method: 'get' | 'post' | 'delete';
  path: string;
  operationId: string;
  tag: 'Identity' | 'Events';
  summary: string;
  /** Open route: scope headers only, no credential. */
  open?: boolean;
  params?: string[];
  body?: string;
  status: 200 | 201 | 204;
  response?: string;
  /** Server-Sent Events stream instead of a JSON body. */
  stream?: true;
  errors: number[];
}

const STATIC_OPS: StaticOp[] = [
  { method: 'post', path: '/identity/register', operationId: 'Identity.Register', tag: 'Identity', summary: 'Register a project user (open unless a project setting closes it)', open: true, body: 'IdentityCredentials', status: 201, response: 'IdentityRegistered', errors: [400, 403, 409, 422, 429] },
  { method: 'post', path: '/identity/login', operationId: 'Identity.Login', tag: 'Identity', summary: 'Log in with email and password', open: true, body: 'IdentityCredentials', status: 200, response: 'IdentityTokens', errors: [400, 401, 422, 429] },
  { method: 'post', path: '/identity/tokens/refresh', operationId: 'Identity.Refresh', tag: 'Identity', summary: 'Exchange a refresh token for new tokens', open: true, body: 'IdentityRefreshInput', status: 200, response: 'IdentityTokens', errors: [400, 401, 422, 429] },
  { method: 'post', path: '/identity/refresh', operationId: 'Identity.RefreshAlias', tag: 'Identity', summary: 'Alias of /identity/tokens/refresh', open: true, body: 'IdentityRefreshInput', status: 200, response: 'IdentityTokens', errors: [400, 401, 422, 429] },
  { method: 'get', path: '/identity/me', operationId: 'Identity.Me', tag: 'Identity', summary: 'The calling actor', status: 200, response: 'IdentityMe', errors: [400, 401] },
  { method: 'get', path: '/identity/sessions', operationId: 'Identity.Sessions.List', tag: 'Identity', summary: 'Sessions of the calling subject', status: 200, response: 'IdentitySessionList', errors: [400, 401] },
  { method: 'delete', path: '/identity/sessions/{sessionId}', operationId: 'Identity.Sessions.Revoke', tag: 'Identity', summary: 'Revoke a session of the calling subject', params: ['SessionId'], status: 204, errors: [400, 401, 403, 404] },
  { method: 'get', path: '/events', operationId: 'Events.List', tag: 'Events', summary: 'Page through the event log', params: ['EventFilter', 'PageSize', 'Cursor'], status: 200, response: 'EventList', errors: [400, 401, 403, 422, 429] },
  { method: 'get', path: '/events/tail', operationId: 'Events.Tail', tag: 'Events', summary: 'Follow the event log as Server-Sent Events (`event: service.event`, `data`: the event envelope; resume with Last-Event-ID)', status: 200, stream: true, errors: [401, 403, 422] },
  { method: 'get', path: '/events/{id}', operationId: 'Events.Read', tag: 'Events', summary: 'Read one event', params: ['EventId'], status: 200, response: 'EventSingle', errors: [400, 401, 403, 404] },
];

/** Path items of the static routes, in a fixed order. */
export function staticPaths(): Array<{ path: string; method: string; operation: Json }> {
  return STATIC_OPS.map((s) => {
    const op: Json = { operationId: s.operationId, tags: [s.tag], summary: s.summary };
    if (s.open === true) op.security = scopeOnlySecurity();
    op.parameters = [...(s.params ?? []).map(paramRef), ...scopeHeaderParams()];
    if (s.body !== undefined) op.requestBody = { required: true, content: jsonContent(schemaRef(s.body)) };
    const success: Json = s.stream === true
      ? { description: 'A stream of events.', headers: correlationHeaders(), content: { 'text/event-stream': { schema: { type: 'string' } } } }
      : s.response === undefined
      ? { description: 'No content.', headers: correlationHeaders() }
      : { description: 'Success.', headers: correlationHeaders(), content: jsonContent(schemaRef(s.response)) };
    op.responses = { [String(s.status)]: success, ...errorResponses(s.errors) };
    return { path: s.path, method: s.method, operation: op };
  });
}

export const STATIC_TAGS = [
  { name: 'Identity', description: 'Project identity: registration, login, tokens, sessions.' },
  { name: 'Events', description: 'The project\'s event log.' },
];
