/**
 * The routes that carry events out of a project (and webhooks in):
 * outbound webhook endpoints and deliveries, replay, the one-time credential
 * reveal, inbound receivers, realtime (WebSocket, SSE, subscription token)
 * and the audit log. Registered by openapi-static.ts; schemas in
 * openapi-events-out-schemas.ts. Management routes are platform-admin only.
 * The `/Webhook/...` aliases of the outbound routes are not listed.
 */
import { schemaRef, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';

export { EVENTS_OUT_SCHEMA_NAMES, eventsOutSchemas } from './openapi-events-out-schemas.js';

const query = (name: string, description: string, schema: Json, required = false): Json => ({ name, in: 'query', required, description, schema });
const header = (name: string, description: string, schema: Json, required = false): Json => ({ name, in: 'header', required, description, schema });

export function eventsOutParameters(): Json {
  return {
    RealtimeEntity: query('entity', 'Entity whose row changes to follow (needs `entity:<Entity>:read`).', { type: 'string', minLength: 1 }, true),
    RealtimeFilter: query('filter', 'Entity filter JSON (as on list routes), evaluated server-side on the current row.', {
      type: 'string', contentMediaType: 'application/json', contentSchema: schemaRef('Filter'),
    }),
    RealtimeSubscriptionId: query('id', 'Subscription id echoed as `subscriptionId` (default `sse`).', { type: 'string', maxLength: 64 }),
    WebSocketUpgrade: header('Upgrade', 'WebSocket handshake.', { type: 'string', const: 'websocket' }, true),
    WebSocketProtocol: header('Sec-WebSocket-Protocol', 'May offer `bearer.<token>` as the credential (the server echoes it).', { type: 'string' }),
    RealtimeAccessToken: query('access_token', 'Credential for clients that cannot set headers (prefer a subscription token from `POST /realtime/token`).', { type: 'string' }),
    RealtimeTenantHeader: header('X-Service-Tenant', 'Tenant slug or id (or the `tenant` query; a subscription token fixes it).', { type: 'string' }),
    RealtimeProjectHeader: header('X-Service-Project', 'Project slug or id (or the `project` query; a subscription token fixes it).', { type: 'string' }),
    RealtimeTenantQuery: query('tenant', 'Tenant, when the header cannot be set.', { type: 'string' }),
    RealtimeProjectQuery: query('project', 'Project, when the header cannot be set.', { type: 'string' }),
    RealtimeBranchQuery: query('branch', 'Branch, when the header cannot be set.', { type: 'string' }),
  };
}


export const EVENTS_OUT_OPS: StaticOp[] = [
  {
    method: 'get', path: '/realtime', operationId: 'Realtime.Connect', tag: 'Realtime', unscoped: true, upgrade: true,
    summary: 'Open a realtime WebSocket (row change subscriptions)',
    description: 'A WebSocket endpoint, not a request/response operation: the message protocol (`subscribe`, `unsubscribe`, `ping`; `subscribed`, `change`, `error`, `pong`) is in docs/realtime.md. ' +
      'Credential: `Authorization: Bearer`, a `bearer.<token>` WebSocket protocol, or `access_token`; a subscription token from `POST /realtime/token` also works. ' +
      'Authentication, scope and the subscription quota are checked before the upgrade and answered as plain JSON errors.',
    params: ['WebSocketUpgrade', 'WebSocketProtocol', 'RealtimeAccessToken', 'RealtimeTenantHeader', 'RealtimeProjectHeader', 'BranchHeader', 'RealtimeTenantQuery', 'RealtimeProjectQuery', 'RealtimeBranchQuery'],
    status: 101, errors: [401, 403, 404, 422, 429],
  },
  {
    method: 'get', path: '/realtime/sse', operationId: 'Realtime.Sse', tag: 'Realtime',
    summary: 'Follow row changes of one entity as Server-Sent Events (one subscription per stream; no replay)',
    description: 'Needs `entity:<Entity>:read`. Past the project bound of open subscriptions (the `realtime.subscriptions` quota, else the node default): 429 `QUOTA_EXCEEDED` (`X-Service-Quota-Kind: realtime.subscriptions`).',
    params: ['RealtimeEntity', 'RealtimeFilter', 'RealtimeSubscriptionId'], status: 200, stream: true, sse: { event: 'service.event', data: 'RealtimeChange' }, errors: [401, 403, 404, 422, 429],
  },
  { method: 'post', path: '/realtime/token', operationId: 'Realtime.Token', tag: 'Realtime', summary: 'Mint a 60 s subscription token for the realtime handshake (never a REST bearer)', status: 201, response: 'RealtimeToken', errors: [401, 403, 404, 422] },
];

export const EVENTS_OUT_TAGS = [
  { name: 'Realtime', description: 'Row change subscriptions over WebSocket or SSE (docs/realtime.md).' },
];
