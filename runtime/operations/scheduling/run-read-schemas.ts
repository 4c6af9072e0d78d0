/**
 * Schemas of the TaskRun reads and of `/api/TriggerAudit` (CONTRACT "Scheduling";
 * runtime/scheduling/types.ts), referred to by runs-read.ts and trigger-audit.ts.
 */
import { schemaRef, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { RUN_CAUSES, RUN_STATES, TRIGGER_DECISIONS } from '../../scheduling/types.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlEnvelope, controlSingle, int } from '../control/control-schemas.js';

const nullable = (s: Json): Json => ({ ...s, type: [s.type, 'null'] });

/** `page` of a paged control-plane list: as entity lists page (`pageSize`, `cursor`, `page.next`). */
const PAGE: Json = {
  type: 'object', required: ['number', 'size'], additionalProperties: false,
  properties: {
    number: { type: 'integer', minimum: 1, description: 'Always 1: pages are cursor-linked.' },
    size: { type: 'integer', minimum: 1 },
    next: { type: 'string', description: 'Opaque cursor of the next page (pass as `cursor`, with the same filters); absent on the last page.' },
  },
};

/** The control-plane envelope with `page` beside `data`. */
function pagedList(surface: string, record: string): Json {
  const env = controlEnvelope(surface, 'listed', { type: 'array', items: schemaRef(record) }) as { required: string[]; properties: Record<string, Json> };
  return { ...env, required: [...env.required, 'page'], properties: { ...env.properties, page: PAGE } };
}

export const RUN_READ_SCHEMAS = defineSchemas({
  ControlTaskRunRecord: {
    type: 'object', additionalProperties: false,
    required: ['id', 'definitionId', 'triggerId', 'cause', 'scheduledFor', 'state', 'attempts', 'input', 'createdAt'],
    properties: {
      id: uuidSchema(),
      definitionId: uuidSchema(),
      triggerId: nullable(uuidSchema()),
      cause: { type: 'string', enum: [...RUN_CAUSES] },
      scheduledFor: at(),
      state: { type: 'string', enum: [...RUN_STATES] },
      attempts: int('Attempts made so far.'),
      input: { description: 'The definition\'s input, or the manual one.' },
      output: { description: 'The handler\'s result (succeeded runs).' },
      error: { description: 'The last attempt\'s error (failed runs).' },
      eventId: { ...uuidSchema(), description: 'Event runs: the event; webhook runs: the inbound event.' },
      createdAt: at(),
      startedAt: at(),
      finishedAt: at(),
    },
  },
  ControlTaskRunSingle: controlSingle('TaskRun', 'read', 'ControlTaskRunRecord'),
  ControlTaskRunList: pagedList('TaskRun', 'ControlTaskRunRecord'),
  ControlTriggerAuditRecord: {
    type: 'object', additionalProperties: false, required: ['at', 'triggerId', 'definitionId', 'scheduledFor', 'decision'],
    properties: {
      at: at(),
      triggerId: nullable(uuidSchema()),
      definitionId: uuidSchema(),
      scheduledFor: nullable(at()),
      decision: { type: 'string', enum: [...TRIGGER_DECISIONS] },
      runId: uuidSchema(),
    },
  },
  ControlTriggerAuditList: pagedList('TriggerAudit', 'ControlTriggerAuditRecord'),
  ControlTriggerAuditSummary: controlEnvelope('TriggerAudit', 'read', {
    type: 'array',
    items: {
      type: 'object', additionalProperties: false, required: ['definitionId', 'decision', 'count'],
      properties: { definitionId: uuidSchema(), decision: { type: 'string', enum: [...TRIGGER_DECISIONS] }, count: int('Decisions recorded.', 1) },
    },
  }),
  ControlTriggerAuditDiagnostics: controlEnvelope('TriggerAudit', 'read', {
    type: 'object', additionalProperties: false, required: ['scanner', 'queued', 'running'],
    properties: {
      scanner: nullable({
        type: 'object', additionalProperties: false, required: ['node', 'lastScanAt', 'lagMs'],
        properties: { node: { type: 'string', description: 'The node whose scanner scanned last.' }, lastScanAt: at(), lagMs: int('How late the latest on-time fire was handled, in ms.') },
      }),
      queued: int('The project\'s queued runs.'),
      running: int('The project\'s running runs.'),
    },
  }),
});
