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

const path = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({ name, in: 'path', required: true, description, schema });
const query = (name: string, description: string, schema: Json, required = false): Json => ({ name, in: 'query', required, description, schema });
const header = (name: string, description: string, schema: Json, required = false): Json => ({ name, in: 'header', required, description, schema });
const UUID: Json = { type: 'string', format: 'uuid' };

export function eventsOutParameters(): Json {
  return {
    WebhookEndpointId: path('id', 'Webhook endpoint id.', UUID),
    EndpointId: path('endpointId', 'Webhook endpoint id.', UUID),
    DeliveryId: path('deliveryId', 'Webhook delivery id.', UUID),
    RevealTokenId: path('revealTokenId', 'Reveal token id (`revealTokenId` of the create/rotate answer).', UUID),
    ReceiverId: path('id', 'Webhook receiver id.', UUID),
    PublicReceiverKey: path('publicReceiverKey', 'The receiver\'s `publicReceiverKey`.', { type: 'string', pattern: '^whr_[A-Za-z0-9_-]{32}$' }),
    ServiceSignature: header('Service-Signature', '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (several `v1` allowed; `t` within ±300 s).', { type: 'string' }, true),
    DeliveryState: query('state', 'Only deliveries in this state.', { type: 'string', enum: ['Pending', 'Claimed', 'Succeeded', 'RetryScheduled', 'DeadLettered'] }),
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

const WH = 'Webhooks';
const ep = '/webhooks/endpoints';
const rc = '/webhooks/receivers';
/** Scope resolution (404), missing scope headers or a bad query/body (422); 503 (default) when the feature is not running on the node. */
const ADMIN_ERRORS = [401, 403, 404, 422];
const SIGNED = 'Same signature scheme as outbound deliveries. See docs/webhooks-inbound.md. 401 `Webhook.SignatureInvalid`/`Webhook.SignatureExpired`; 404 unknown key; 422 malformed payload; a repeated `id` answers 202 with `duplicate: true`.';

export const EVENTS_OUT_OPS: StaticOp[] = [
  { method: 'get', path: ep, operationId: 'Webhooks.Endpoints.List', tag: WH, auth: 'admin', summary: 'List the project\'s outbound webhook endpoints', status: 200, response: 'WebhookEndpointList', errors: ADMIN_ERRORS },
  { method: 'post', path: ep, operationId: 'Webhooks.Endpoints.Create', tag: WH, auth: 'admin', summary: 'Create an outbound webhook endpoint', description: 'Without `signingSecret` the platform generates one and the answer carries `revealTokenId` (see `/CredentialReveal/{revealTokenId}/reveal`).', body: 'WebhookEndpointInput', status: 201, response: 'WebhookEndpointWithRevealSingle', errors: [...ADMIN_ERRORS, 413] },
  { method: 'get', path: `${ep}/{id}`, operationId: 'Webhooks.Endpoints.Read', tag: WH, auth: 'admin', summary: 'Read an outbound webhook endpoint', params: ['WebhookEndpointId'], status: 200, response: 'WebhookEndpointSingle', errors: ADMIN_ERRORS },
  { method: 'put', path: `${ep}/{id}`, operationId: 'Webhooks.Endpoints.Update', tag: WH, auth: 'admin', summary: 'Replace an outbound webhook endpoint (the secret is kept unless `signingSecret` is given)', params: ['WebhookEndpointId'], body: 'WebhookEndpointInput', status: 200, response: 'WebhookEndpointWithRevealSingle', errors: [...ADMIN_ERRORS, 413] },
  { method: 'patch', path: `${ep}/{id}`, operationId: 'Webhooks.Endpoints.Patch', tag: WH, auth: 'admin', summary: 'Merge-update an outbound webhook endpoint', params: ['WebhookEndpointId'], body: 'WebhookEndpointPatch', status: 200, response: 'WebhookEndpointWithRevealSingle', errors: [...ADMIN_ERRORS, 413] },
  { method: 'delete', path: `${ep}/{id}`, operationId: 'Webhooks.Endpoints.Delete', tag: WH, auth: 'admin', summary: 'Delete an outbound webhook endpoint and its deliveries', params: ['WebhookEndpointId'], status: 204, errors: ADMIN_ERRORS },
  { method: 'post', path: `${ep}/{id}/rotate-secret`, operationId: 'Webhooks.Endpoints.RotateSecret', tag: WH, auth: 'admin', summary: 'Replace the signing secret with a generated one (one-time reveal via `revealTokenId`)', params: ['WebhookEndpointId'], status: 200, response: 'WebhookEndpointWithRevealSingle', errors: ADMIN_ERRORS },
  { method: 'get', path: `${ep}/{endpointId}/deliveries`, operationId: 'Webhooks.Endpoints.Deliveries', tag: WH, auth: 'admin', summary: 'Deliveries of an endpoint, newest first', params: ['EndpointId', 'PageSize', 'DeliveryState'], status: 200, response: 'WebhookDeliveryList', errors: ADMIN_ERRORS },
  { method: 'get', path: '/webhooks/deliveries', operationId: 'Webhooks.Deliveries.List', tag: WH, auth: 'admin', summary: 'Recent deliveries of the project, newest first', params: ['PageSize', 'DeliveryState'], status: 200, response: 'WebhookDeliveryList', errors: ADMIN_ERRORS },
  { method: 'post', path: '/webhooks/deliveries/{deliveryId}/replay', operationId: 'Webhooks.Deliveries.Replay', tag: WH, auth: 'admin', summary: 'One more attempt of a delivery (same event id, fresh retry budget); 409 while an attempt is in flight', params: ['DeliveryId'], status: 202, response: 'ReplayAccepted', errors: [...ADMIN_ERRORS, 409] },
  { method: 'post', path: '/events/{id}/replay', operationId: 'Events.Replay', tag: 'Events', auth: 'admin', summary: 'Send an event to a webhook endpoint again (creates the delivery when the endpoint never had it)', params: ['EventId'], body: 'EventReplayInput', status: 202, response: 'ReplayAccepted', errors: [...ADMIN_ERRORS, 409, 413] },
  {
    method: 'post', path: '/CredentialReveal/{revealTokenId}/reveal', operationId: 'CredentialReveal.Reveal', tag: WH, auth: 'admin', unscoped: true, noStore: true,
    summary: 'Reveal a platform-generated signing secret, exactly once',
    description: 'The one route that returns a secret. The token is deleted as it is read (and expires after 15 minutes unread): a second call answers 404 `CredentialReveal.NotFound`.',
    params: ['RevealTokenId'], status: 200, response: 'RevealedSecret', errors: [401, 403, 404],
  },

  { method: 'get', path: rc, operationId: 'Webhooks.Receivers.List', tag: WH, auth: 'admin', summary: 'List the project\'s inbound webhook receivers', status: 200, response: 'WebhookReceiverList', errors: ADMIN_ERRORS },
  { method: 'post', path: rc, operationId: 'Webhooks.Receivers.Create', tag: WH, auth: 'admin', summary: 'Create an inbound webhook receiver (generated secret: one-time reveal via `revealTokenId`)', body: 'WebhookReceiverInput', status: 201, response: 'WebhookReceiverWithRevealSingle', errors: [...ADMIN_ERRORS, 413] },
  { method: 'get', path: `${rc}/{id}`, operationId: 'Webhooks.Receivers.Read', tag: WH, auth: 'admin', summary: 'Read an inbound webhook receiver', params: ['ReceiverId'], status: 200, response: 'WebhookReceiverSingle', errors: ADMIN_ERRORS },
  { method: 'put', path: `${rc}/{id}`, operationId: 'Webhooks.Receivers.Update', tag: WH, auth: 'admin', summary: 'Rename a receiver or replace its signing secret', params: ['ReceiverId'], body: 'WebhookReceiverUpdate', status: 200, response: 'WebhookReceiverSingle', errors: [...ADMIN_ERRORS, 413] },
  { method: 'delete', path: `${rc}/{id}`, operationId: 'Webhooks.Receivers.Delete', tag: WH, auth: 'admin', summary: 'Delete an inbound webhook receiver', params: ['ReceiverId'], status: 204, errors: ADMIN_ERRORS },
  { method: 'get', path: '/webhooks/diagnostics', operationId: 'Webhooks.Diagnostics', tag: WH, auth: 'admin', summary: 'Counts per webhook table and state, and the last failed webhook calls', status: 200, response: 'WebhookDiagnostics', errors: ADMIN_ERRORS },
  { method: 'post', path: '/webhooks/inbound/{publicReceiverKey}', operationId: 'Webhooks.Inbound.Receive', tag: WH, auth: 'public', unscoped: true, summary: 'Deliver a signed message to a receiver (public; no bearer)', description: SIGNED, params: ['PublicReceiverKey', 'ServiceSignature'], body: 'InboundWebhookMessage', status: 202, response: 'InboundReceipt', errors: [401, 404, 413, 422] },
  { method: 'post', path: '/webhooks/{publicReceiverKey}', operationId: 'Webhooks.Inbound.ReceiveAlias', tag: WH, auth: 'public', unscoped: true, summary: 'Alias of `/webhooks/inbound/{publicReceiverKey}`', description: SIGNED, params: ['PublicReceiverKey', 'ServiceSignature'], body: 'InboundWebhookMessage', status: 202, response: 'InboundReceipt', errors: [401, 404, 413, 422] },

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
  { name: 'Webhooks', description: 'Outbound webhook endpoints and deliveries, replay, inbound receivers (docs/webhooks.md, docs/webhooks-inbound.md).' },
  { name: 'Realtime', description: 'Row change subscriptions over WebSocket or SSE (docs/realtime.md).' },
];
