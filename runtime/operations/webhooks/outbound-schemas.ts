/**
 * Schemas of the outbound webhook operations, the replays and the one-time
 * credential reveal (docs/webhooks.md), referred to by their contracts in
 * outbound.ts and replay.ts. No answer schema holds a secret: endpoints expose
 * `signingSecretRef` and, when the platform generated the secret, a one-time
 * `revealTokenId`; only `RevealedSecret` (the reveal route) carries one, once.
 *
 * The bodies are validated before the handler, with the reason codes the
 * handler answered before (outbound.ts ENDPOINT_REASONS). Where a check has its
 * own reason code that a schema keyword would answer differently, the schema
 * leaves it to the handler and says so in the description: the URL
 * (`Webhook.InvalidUrl`), unknown keys of `filter` (`Webhook.InvalidFilter`) and
 * of `retryPolicy` (`Webhook.InvalidRetryPolicy`), and the replay target
 * (`Replay.InvalidTarget`).
 */
import { dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const nullable = (type: string, description: string, extra: Json = {}): Json => ({ type: [type, 'null'], description, ...extra });
const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });

export const DELIVERY_STATES = ['Pending', 'Claimed', 'Succeeded', 'RetryScheduled', 'DeadLettered'];
const EVENT_TYPE_FILTER = 'An event type (`entity.Order.created`), or a prefix ending in `*` (`entity.Order.*`, `*`); null: every type.';
export const REVEAL_TOKEN = 'Present only when the platform generated the signing secret: `POST /CredentialReveal/{revealTokenId}/reveal` returns it once (expires after 15 minutes unread).';

/** Create/PUT body fields of an endpoint; PATCH takes the same fields, all optional. */
const endpointInputProperties = (): Json => ({
  url: {
    type: 'string',
    description: 'Absolute `http`/`https` URI of at most 2048 characters, no credentials (else 422 `Webhook.InvalidUrl`). Private/loopback targets answer 422 `Webhook.PrivateTarget` unless the operator allows them.',
  },
  description: { type: ['string', 'null'], maxLength: 1000 },
  eventTypeFilter: { type: ['string', 'null'], maxLength: 200, pattern: '^[A-Za-z0-9_.-]*\\*?$', description: EVENT_TYPE_FILTER },
  filter: schemaRef('WebhookEndpointFilter'),
  retryPolicy: schemaRef('WebhookRetryPolicy'),
  signingSecret: {
    type: ['string', 'null'], format: 'password', writeOnly: true, minLength: 16, maxLength: 256,
    description: 'Caller-supplied signing secret (stored encrypted, never returned). Omitted: the platform generates one and answers a `revealTokenId` (PUT/PATCH keep the current secret).',
  },
});

export const OUTBOUND_SCHEMAS = defineSchemas({
  WebhookRetryPolicy: {
    type: ['object', 'null'],
    description: 'Retry policy; delay `baseDelaySeconds · 2^(attempt-1)`, capped at 1 hour, with jitter. Other properties answer 422 `Webhook.InvalidRetryPolicy`.',
    properties: {
      maxAttempts: { type: 'integer', minimum: 1, maximum: 20, default: 10 },
      baseDelaySeconds: { type: 'number', minimum: 0, maximum: 3600, default: 1 },
    },
  },
  WebhookEndpointFilter: {
    type: ['object', 'null'], required: ['op', 'path', 'value'],
    description: 'One comparison on a JSON path of the event envelope; a path that does not lead to a string does not match. Other properties answer 422 `Webhook.InvalidFilter`.',
    properties: {
      op: { type: 'string', enum: ['eq', 'startsWith', 'endsWith'] },
      path: { type: 'string', pattern: '^\\$(\\.[A-Za-z_][A-Za-z0-9_]{0,63}){1,8}$', examples: ['$.data.entity'] },
      value: { type: 'string', maxLength: 512 },
    },
  },
  WebhookEndpointInput: { ...obj(['url'], endpointInputProperties(), { additionalProperties: false }), description: 'Create (POST) or replace (PUT) body; PUT resets omitted optional fields to their defaults.' },
  WebhookEndpointPatch: { type: 'object', additionalProperties: false, description: 'Merge-update body: given fields replace the current ones.', properties: endpointInputProperties() },
  WebhookEndpoint: obj(['id', 'url', 'description', 'eventTypeFilter', 'filter', 'retryPolicy', 'signingSecretRef', 'createdAt', 'updatedAt'], {
    id: uuidSchema(),
    url: { type: 'string', format: 'uri' },
    description: { type: ['string', 'null'] },
    eventTypeFilter: nullable('string', EVENT_TYPE_FILTER),
    filter: schemaRef('WebhookEndpointFilter'),
    retryPolicy: obj(['maxAttempts', 'baseDelaySeconds'], { maxAttempts: { type: 'integer' }, baseDelaySeconds: { type: 'number' } }),
    signingSecretRef: str('Reference of the signing secret (`secret:<id>`); the secret itself is never returned.'),
    createdAt: dateTimeSchema(),
    updatedAt: dateTimeSchema(),
  }, { description: 'An outbound webhook endpoint. Never contains the signing secret.' }),
  WebhookEndpointWithReveal: { allOf: [schemaRef('WebhookEndpoint'), { type: 'object', properties: { revealTokenId: { ...uuidSchema(), description: REVEAL_TOKEN } } }] },
  WebhookEndpointSingle: singleEnvelope(schemaRef('WebhookEndpoint')),
  WebhookEndpointWithRevealSingle: singleEnvelope(schemaRef('WebhookEndpointWithReveal')),
  WebhookEndpointList: listEnvelope(schemaRef('WebhookEndpoint')),
  WebhookDeliveryAttempt: obj(['at', 'status', 'durationMs'], {
    at: dateTimeSchema(),
    status: nullable('integer', 'HTTP status of the answer; null for a network error or timeout.'),
    durationMs: { type: 'integer', minimum: 0 },
    error: { type: 'string', maxLength: 300, description: 'Short excerpt of the failure.' },
  }),
  WebhookDelivery: obj(['id', 'endpointId', 'eventId', 'eventType', 'state', 'attempts', 'nextAttemptAt', 'createdAt', 'updatedAt'], {
    id: uuidSchema(),
    endpointId: uuidSchema(),
    eventId: str('Sent as `Service-Event-Id` on every attempt and replay (receivers dedupe on it).'),
    eventType: str(),
    state: { type: 'string', enum: DELIVERY_STATES },
    attempts: { type: 'array', items: schemaRef('WebhookDeliveryAttempt') },
    nextAttemptAt: nullable('string', 'When the next attempt is due (Pending/RetryScheduled only).', { format: 'date-time' }),
    heldReason: str('Present while a hard `webhook.deliveries.monthly` quota holds the delivery back.'),
    createdAt: dateTimeSchema(),
    updatedAt: dateTimeSchema(),
  }, { description: 'One (endpoint, event) delivery and its attempts.' }),
  WebhookDeliveryList: listEnvelope(schemaRef('WebhookDelivery')),
  EventReplayInput: obj(['target'], {
    target: { type: 'string', maxLength: 200, description: '`webhook:<endpointId>`; anything else answers 422 `Replay.InvalidTarget`.' },
    reason: { type: ['string', 'null'], maxLength: 200, description: 'Free text, for the audit trail.' },
  }, { additionalProperties: false }),
  ReplayAccepted: obj(['replayId', 'eventId', 'state', 'data', 'meta'], {
    replayId: uuidSchema(),
    eventId: str(),
    state: { type: 'string', const: 'scheduled' },
    data: obj(['replayId', 'eventId', 'state', 'delivery'], { replayId: uuidSchema(), eventId: str(), state: { type: 'string', const: 'scheduled' }, delivery: schemaRef('WebhookDelivery') }),
    meta: schemaRef('Meta'),
  }, { description: 'Replay scheduled: the delivery is due now with a fresh retry budget (flat fields and the `data` envelope carry the same ids).' }),
  RevealedSecret: singleEnvelope(obj(['secret'], { secret: { type: 'string', description: 'The generated signing secret, in clear. Returned exactly once.' } }),
    'One-time reveal of a platform-generated secret (the only response that carries a secret; `Cache-Control: no-store`).'),
});
