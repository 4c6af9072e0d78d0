/** Schemas of the realtime operations (docs/realtime.md), referred to by their contracts in index.ts. */
import { dateTimeSchema, singleEnvelope, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });

export const REALTIME_SCHEMAS = defineSchemas({
  RealtimeToken: singleEnvelope({
    type: 'object', required: ['token', 'expiresAt'],
    properties: {
      token: str('`rt1.<payload>.<mac>`: valid 60 s, bound to this tenant+project and the caller; accepted only on the realtime handshake.'),
      expiresAt: dateTimeSchema(),
    },
  }, 'Short-lived realtime subscription token.'),
  RealtimeChange: {
    type: 'object', description: 'A row change: names the row and the changed fields, never values.',
    required: ['type', 'subscriptionId', 'kind', 'entity', 'entityId', 'changedFields', 'eventId', 'occurredAt', 'correlationId', 'publicationVersion'],
    properties: {
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
    },
  },
});
