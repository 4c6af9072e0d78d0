/** Schemas of the audit log operations (CONTRACT "Audit"), referred to by their contracts in audit.ts. */
import { dateTimeSchema, listEnvelope, schemaRef, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { str } from './control-schemas.js';

const DECISIONS = ['Allow', 'Deny', 'Mask', 'Challenge', 'Error'];

export const AUDIT_SCHEMAS = defineSchemas({
  AuditRecord: {
    type: 'object', required: ['correlationId', 'at', 'actor', 'operationId', 'decision', 'reasonCode', 'status'],
    description: 'One audit row (one per decision).',
    properties: {
      correlationId: str(),
      at: dateTimeSchema(),
      actor: str('`platform-admin`, `user:<id>` or `anonymous`.'),
      operationId: str(),
      decision: { type: 'string', enum: DECISIONS },
      reasonCode: str(),
      status: { type: 'integer', description: 'HTTP status of the answer.' },
    },
  },
  AuditList: listEnvelope(schemaRef('AuditRecord'), 'Audit rows in write order; `page.next` while more remain.'),
});

/** The `filter` query parameter's JSON, described inline in the parameter (a parameter makes no schema reachable). */
export const AUDIT_FILTER: Json = {
  type: 'object', additionalProperties: false,
  description: 'Audit filter, sent as JSON in the `filter` query parameter; unknown keys answer 422 `Filter.UnknownField`.',
  properties: {
    reasonCode: str(),
    actor: str('`platform-admin`, `user:<id>`, `anonymous`.'),
    entity: str('Entity name: operation ids `Entity.<E>.*`.'),
    operationId: str(),
    decision: { type: 'string', enum: DECISIONS },
    correlationId: str(),
    since: { ...dateTimeSchema(), description: 'Rows at or after this instant.' },
    until: { ...dateTimeSchema(), description: 'Rows before this instant.' },
  },
};
