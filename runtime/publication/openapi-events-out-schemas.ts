/**
 * Component schemas of the webhook, realtime and audit routes
 * (openapi-events-out.ts). No response schema holds a secret: endpoints and
 * receivers expose `signingSecretRef` and, when the platform generated the
 * secret, a one-time `revealTokenId`; only `RevealedSecret` (the reveal
 * route) carries a secret, once.
 */
import { dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, uuidSchema, type Json } from './openapi-components.js';

export const EVENTS_OUT_SCHEMA_NAMES = [
  'RealtimeToken', 'RealtimeChange',
] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });

const REVEAL_TOKEN = 'Present only when the platform generated the signing secret: `POST /CredentialReveal/{revealTokenId}/reveal` returns it once (expires after 15 minutes unread).';

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
  return realtimeAuditSchemas();
}
