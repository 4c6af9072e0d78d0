/**
 * Component schemas of the webhook, realtime and audit routes
 * (openapi-events-out.ts). No response schema holds a secret: endpoints and
 * receivers expose `signingSecretRef` and, when the platform generated the
 * secret, a one-time `revealTokenId`; only `RevealedSecret` (the reveal
 * route) carries a secret, once.
 */
import { dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, uuidSchema, type Json } from './openapi-components.js';

export const EVENTS_OUT_SCHEMA_NAMES = [
  'WebhookRetryPolicy', 'WebhookEndpointFilter', 'WebhookEndpointInput', 'WebhookEndpointPatch', 'WebhookEndpoint',
  'WebhookEndpointWithReveal', 'WebhookEndpointSingle', 'WebhookEndpointWithRevealSingle', 'WebhookEndpointList',
  'WebhookDeliveryAttempt', 'WebhookDelivery', 'WebhookDeliveryList', 'EventReplayInput', 'ReplayAccepted', 'RevealedSecret',
  'WebhookReceiverInput', 'WebhookReceiverUpdate', 'WebhookReceiver', 'WebhookReceiverWithReveal', 'WebhookReceiverSingle',
  'WebhookReceiverWithRevealSingle', 'WebhookReceiverList', 'InboundWebhookMessage', 'InboundReceipt', 'WebhookDiagnostics',
  'RealtimeToken', 'RealtimeChange',
] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const nullable = (type: string, description: string, extra: Json = {}): Json => ({ type: [type, 'null'], description, ...extra });
const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });

const DELIVERY_STATES = ['Pending', 'Claimed', 'Succeeded', 'RetryScheduled', 'DeadLettered'];
const EVENT_TYPE_FILTER = 'An event type (`entity.Order.created`), or a prefix ending in `*` (`entity.Order.*`, `*`); null: every type.';
const REVEAL_TOKEN = 'Present only when the platform generated the signing secret: `POST /CredentialReveal/{revealTokenId}/reveal` returns it once (expires after 15 minutes unread).';

/** Create/PUT body fields of an endpoint; PATCH takes the same fields, all optional. */
function endpointInputProperties(): Json {
  return {
    url: { type: 'string', format: 'uri', maxLength: 2048, description: 'Absolute `http`/`https` URL, no credentials. Private/loopback targets answer 422 `Webhook.PrivateTarget` unless the operator allows them.' },
    description: { type: ['string', 'null'], maxLength: 1000 },
    eventTypeFilter: { type: ['string', 'null'], maxLength: 200, pattern: '^[A-Za-z0-9_.-]*\\*?$', description: EVENT_TYPE_FILTER },
    filter: schemaRef('WebhookEndpointFilter'),
    retryPolicy: schemaRef('WebhookRetryPolicy'),
    signingSecret: {
      type: ['string', 'null'], format: 'password', writeOnly: true, minLength: 16, maxLength: 256,
      description: 'Caller-supplied signing secret (stored encrypted, never returned). Omitted: the platform generates one and answers a `revealTokenId` (PUT/PATCH keep the current secret).',
    },
  };
}

function webhookSchemas(): Json {
  return {
    WebhookRetryPolicy: {
      type: ['object', 'null'], additionalProperties: false,
      description: 'Retry policy; delay `baseDelaySeconds · 2^(attempt-1)`, capped at 1 hour, with jitter.',
      properties: {
        maxAttempts: { type: 'integer', minimum: 1, maximum: 20, default: 10 },
        baseDelaySeconds: { type: 'number', minimum: 0, maximum: 3600, default: 1 },
      },
    },
    WebhookEndpointFilter: {
      type: ['object', 'null'], additionalProperties: false, required: ['op', 'path', 'value'],
      description: 'One comparison on a JSON path of the event envelope; a path that does not lead to a string does not match.',
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
      createdAt: dateTimeSchema(),
      updatedAt: dateTimeSchema(),
    }, { description: 'One (endpoint, event) delivery and its attempts.' }),
    WebhookDeliveryList: listEnvelope(schemaRef('WebhookDelivery')),
    EventReplayInput: obj(['target'], {
      target: { type: 'string', pattern: '^webhook:[0-9a-fA-F-]{36}$', description: '`webhook:<endpointId>`.' },
      reason: str('Free text, for the audit trail.'),
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
    WebhookReceiverInput: obj(['name'], {
      name: { type: 'string', minLength: 1 },
      signingSecret: { type: 'string', format: 'password', writeOnly: true, minLength: 16, description: 'Omitted: the platform generates one and answers a `revealTokenId`.' },
    }, { additionalProperties: false }),
    WebhookReceiverUpdate: {
      type: 'object', additionalProperties: false,
      properties: { name: { type: 'string', minLength: 1 }, signingSecret: { type: 'string', format: 'password', writeOnly: true, minLength: 16, description: 'Replaces the secret (new `signingSecretRef`).' } },
    },
    WebhookReceiver: obj(['id', 'name', 'publicReceiverKey', 'signingSecretRef', 'createdAt', 'updatedAt'], {
      id: uuidSchema(),
      name: str(),
      publicReceiverKey: { type: 'string', pattern: '^whr_[A-Za-z0-9_-]{32}$', description: 'Key of the public delivery URL `/webhooks/inbound/{publicReceiverKey}`.' },
      signingSecretRef: str('Reference of the signing secret; the secret itself is never returned.'),
      createdAt: dateTimeSchema(),
      updatedAt: dateTimeSchema(),
    }, { description: 'An inbound webhook receiver. Never contains the signing secret.' }),
    WebhookReceiverWithReveal: { allOf: [schemaRef('WebhookReceiver'), { type: 'object', properties: { revealTokenId: { ...uuidSchema(), description: REVEAL_TOKEN } } }] },
    WebhookReceiverSingle: singleEnvelope(schemaRef('WebhookReceiver')),
    WebhookReceiverWithRevealSingle: singleEnvelope(schemaRef('WebhookReceiverWithReveal')),
    WebhookReceiverList: singleEnvelope({ type: 'array', items: schemaRef('WebhookReceiver') }, 'Every receiver of the project (at most 1000), oldest first.'),
    InboundWebhookMessage: obj(['type', 'id'], {
      type: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$', description: 'Becomes the event type `webhook.inbound.<type>`.' },
      id: { type: ['string', 'integer'], minLength: 1, maxLength: 200, description: 'Sender\'s message id; a repeat for the same receiver is a duplicate.' },
      data: { description: 'Any JSON, kept on the receipt.' },
    }, { description: 'Inbound message; the `Service-Signature` is verified over the raw body bytes before it is parsed.' }),
    InboundReceipt: singleEnvelope(obj(['receiptId', 'eventId', 'duplicate'], {
      receiptId: uuidSchema(), eventId: str(), duplicate: { type: 'boolean', description: 'true: this id was already received; no second event.' },
    })),
    WebhookDiagnostics: singleEnvelope(obj(['counts', 'lastErrors'], {
      counts: {
        type: 'object', description: 'Per webhook table (`receivers`, `receipts`, `endpoints`, `deliveries`): `total` and a count per state.',
        additionalProperties: { type: 'object', required: ['total'], additionalProperties: { type: 'integer', minimum: 0 } },
      },
      lastErrors: {
        type: 'array', maxItems: 20, description: 'The project\'s last `Webhooks.*` audit rows with status ≥ 400, newest first.',
        items: obj(['at', 'correlationId', 'operationId', 'reasonCode', 'status'], { at: dateTimeSchema(), correlationId: str(), operationId: str(), reasonCode: str(), status: { type: 'integer' } }),
      },
    })),
  };
}

function realtimeAuditSchemas(): Json {
  return {
    RealtimeToken: singleEnvelope(obj(['token', 'expiresAt'], {
      token: str('`rt1.<payload>.<mac>`: valid 60 s, bound to this tenant+project and the caller; accepted only on the realtime handshake.'),
      expiresAt: dateTimeSchema(),
    }), 'Short-lived realtime subscription token.'),
    RealtimeChange: obj(['type', 'subscriptionId', 'kind', 'entity', 'entityId', 'changedFields', 'eventId', 'occurredAt', 'correlationId', 'publicationVersion'], {
      type: { type: 'string', const: 'change' },
      subscriptionId: str(),
      kind: { type: 'string', enum: ['created', 'updated', 'deleted'] },
      entity: str(),
      entityId: str(),
      changedFields: { type: 'array', items: str() },
      eventId: str(),
      occurredAt: dateTimeSchema(),
      correlationId: str(),
      publicationVersion: { type: 'integer', format: 'int64' },
    }, { description: 'A row change: names the row and the changed fields, never values.' }),
  };
}

export function eventsOutSchemas(): Json {
  return { ...webhookSchemas(), ...realtimeAuditSchemas() };
}
