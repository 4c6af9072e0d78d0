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
      stage: { type: 'string', enum: ['authored'], description: 'Only on rows authored code left: one per invocation and one per `ctx.log` line (docs/authored-code.md "Evidence and usage").' },
      handler: str('The handler (authored rows).'),
      sha256: str('Hex digest of the source bytes the handler ran (authored rows).'),
      outcome: { type: 'string', enum: ['ok', 'threw', 'cpuLimit', 'wallClockLimit', 'memoryLimit', 'canonical', 'resultInvalid'], description: 'How the invocation ended (invocation rows).' },
      cpuMs: { type: 'number', minimum: 0 },
      wallMs: { type: 'number', minimum: 0 },
      peakMemoryBytes: { type: 'integer', minimum: 0 },
      stack: str('The stack of the error the handler threw (never in the answer).'),
      level: { type: 'string', enum: ['info', 'warn', 'error'], description: '`ctx.log` rows.' },
      message: str('`ctx.log` rows: the line.'),
      fields: { type: 'object', description: '`ctx.log` rows: the fields given with the line.' },
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
    stage: { type: 'string', enum: ['authored'], description: 'Only rows authored code left.' },
    since: { ...dateTimeSchema(), description: 'Rows at or after this instant.' },
    until: { ...dateTimeSchema(), description: 'Rows before this instant.' },
  },
};
