/**
 * Schemas of the event log operations (CONTRACT "Events"; docs/events.md),
 * referred to by their contracts in events.ts and webhooks/replay.ts.
 */
import { dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { str } from './control-schemas.js';

export const EVENT_SCHEMAS = defineSchemas({
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
});

/**
 * The `filter` query parameter's JSON. Described inline in the parameter: a
 * query parameter does not make a schema reachable in the document.
 */
export const EVENT_FILTER: Json = {
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
};

/** `Last-Event-ID` and its query twin: where a tail resumes. */
export const LAST_EVENT_ID_HEADER = { 'Last-Event-ID': { description: 'Resume after this stream position (an `id:` of the stream); a position the log never produced answers 422.' } };
export const LAST_EVENT_ID_QUERY = { lastEventId: { description: 'Same as `Last-Event-ID`, for clients that cannot set headers.' } };
