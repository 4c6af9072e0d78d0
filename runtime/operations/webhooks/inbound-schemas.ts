/**
 * Schemas of the inbound webhook operations and the webhook diagnostics
 * (docs/webhooks-inbound.md), referred to by their contracts in inbound.ts and
 * diagnostics.ts. Receivers expose `signingSecretRef` and a one-time
 * `revealTokenId`, never the secret.
 *
 * A blank `name` and a `signingSecret` shorter than 16 characters have reason
 * codes of their own (`Webhook.InvalidName`, `Webhook.InvalidSigningSecret`)
 * that a schema keyword would answer as `Webhook.InvalidProperty`: the handler
 * keeps those two checks, the descriptions say so.
 */
import { dateTimeSchema, schemaRef, singleEnvelope, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { REVEAL_TOKEN } from './outbound-schemas.js';

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });

const NAME: Json = { type: 'string', maxLength: 200, description: 'Not blank (else 422 `Webhook.InvalidName`).' };
const SECRET = (what: string): Json => ({
  type: ['string', 'null'], format: 'password', writeOnly: true, maxLength: 200,
  description: `At least 16 characters (else 422 \`Webhook.InvalidSigningSecret\`). ${what}`,
});

export const INBOUND_SCHEMAS = defineSchemas({
  WebhookReceiverInput: obj(['name'], {
    name: NAME,
    signingSecret: SECRET('Omitted or null: the platform generates one and answers a `revealTokenId`.'),
  }, { additionalProperties: false }),
  WebhookReceiverUpdate: {
    type: 'object', additionalProperties: false,
    properties: { name: NAME, signingSecret: SECRET('Replaces the secret (new `signingSecretRef`); null keeps it.') },
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
});
