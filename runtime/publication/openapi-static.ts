/**
 * The non-entity routes of a project's REST surface that the document also
 * describes: the event log here; webhooks, realtime and audit in
 * openapi-events-out.ts, assembled with them below. Identity routes are
 * declared with their operations (runtime/operations/identity/).
 */
import type { StaticOp } from './openapi-static-op.js';
import {
  correlationHeaders, dateTimeSchema, errorResponses, headerRef, jsonContent, listEnvelope, paramRef, schemaRef, scopeHeaderParams,
  scopeOnlySecurity, singleEnvelope, uuidSchema, type Json,
} from './openapi-components.js';
import { EVENTS_OUT_OPS, EVENTS_OUT_SCHEMA_NAMES, EVENTS_OUT_TAGS, eventsOutParameters, eventsOutSchemas } from './openapi-events-out.js';

export const STATIC_SCHEMA_NAMES = [
  'Event', 'EventSingle', 'EventList', 'EventFilter', ...EVENTS_OUT_SCHEMA_NAMES,
] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });

export function staticSchemas(): Json {
  return {
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
    ...eventsOutSchemas(),
  };
}

export function staticParameters(): Json {
  return {
    EventId: { name: 'id', in: 'path', required: true, description: 'Event id.', schema: { type: 'string' } },
    EventFilter: {
      name: 'filter', in: 'query', required: false, description: 'Event filter JSON (`type`, `entity`, `since`, `until`, `correlationId`).',
      schema: { type: 'string', contentMediaType: 'application/json', contentSchema: schemaRef('EventFilter') },
    },
    ...eventsOutParameters(),
  };
}

const STATIC_OPS: StaticOp[] = [
  { method: 'get', path: '/events', operationId: 'Events.List', tag: 'Events', auth: 'admin', summary: 'Page through the event log', params: ['EventFilter', 'PageSize', 'Cursor'], status: 200, response: 'EventList', errors: [400, 401, 403, 422, 429] },
  { method: 'get', path: '/events/tail', operationId: 'Events.Tail', tag: 'Events', auth: 'admin', summary: 'Follow the event log as Server-Sent Events (`event: service.event`, `data`: the event envelope; resume with Last-Event-ID)', params: ['LastEventIdHeader', 'LastEventIdQuery'], status: 200, stream: true, sse: { event: 'service.event', data: 'Event' }, errors: [401, 403, 422] },
  { method: 'get', path: '/events/{id}', operationId: 'Events.Read', tag: 'Events', auth: 'admin', summary: 'Read one event', params: ['EventId'], status: 200, response: 'EventSingle', errors: [400, 401, 403, 404] },
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


    ...EVENTS_OUT_OPS,
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
  { name: 'Events', description: 'The project\'s event log.' },
  ...EVENTS_OUT_TAGS,
];
