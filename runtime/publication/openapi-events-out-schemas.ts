/**
 * Component schemas of the webhook, realtime and audit routes
 * (openapi-events-out.ts). No response schema holds a secret: endpoints and
 * receivers expose `signingSecretRef` and, when the platform generated the
 * secret, a one-time `revealTokenId`; only `RevealedSecret` (the reveal
 * route) carries a secret, once.
 */
import { dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, uuidSchema, type Json } from './openapi-components.js';

export const EVENTS_OUT_SCHEMA_NAMES = [
  'WebhookReceiverInput', 'WebhookReceiverUpdate', 'WebhookReceiver', 'WebhookReceiverWithReveal', 'WebhookReceiverSingle',
  'WebhookReceiverWithRevealSingle', 'WebhookReceiverList', 'InboundWebhookMessage', 'InboundReceipt', 'WebhookDiagnostics',
  'RealtimeToken', 'RealtimeChange',
] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });

const REVEAL_TOKEN = 'Present only when the platform generated the signing secret: `POST /CredentialReveal/{revealTokenId}/reveal` returns it once (expires after 15 minutes unread).';

function webhookSchemas(): Json {
  return {
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
