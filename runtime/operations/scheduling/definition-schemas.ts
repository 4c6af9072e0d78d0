/**
 * Schemas of the task definition and trigger routes (CONTRACT "Scheduling"), referred to by their
 * contracts in definitions.ts and triggers.ts. The body schemas refuse wrong types and bounds with the
 * reason codes the routes declare; what needs the kind, the publication or the database
 * (scheduling/definition-body.ts, scheduling/trigger-spec.ts) is the handler's to check.
 */
import { dateTimeSchema, schemaRef, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { DEFINITION_NAME_PATTERN } from '../../scheduling/definition-body.js';
import { EVENT_KINDS, MAX_CRON_LENGTH, MAX_INTERVAL_SECONDS, MAX_ZONE_LENGTH } from '../../scheduling/trigger-spec.js';
import { MISFIRE_POLICIES, OVERLAP_POLICIES, SCHEDULING_DEFAULTS as D, SCHEDULING_LIMITS as L, TRIGGER_KINDS } from '../../scheduling/types.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlEnvelope, controlSingle, int } from '../control/control-schemas.js';

const boundedInt = (minimum: number, maximum: number, description: string): Json => ({ type: 'integer', minimum, maximum, description });

const RETRY: Json = {
  type: 'object', additionalProperties: false,
  description: `A failed attempt is retried after min(maxBackoffSeconds, backoffSeconds × 2^(n−1)) ± 20 % until maxAttempts. Missing members are the defaults (${D.retry.maxAttempts}, ${D.retry.backoffSeconds}, ${D.retry.maxBackoffSeconds}).`,
  properties: {
    maxAttempts: boundedInt(1, L.maxAttempts, 'Attempts in all, the first one included.'),
    backoffSeconds: boundedInt(0, L.maxBackoffSeconds, 'Wait before the first retry.'),
    maxBackoffSeconds: boundedInt(0, L.maxBackoffSeconds, 'Longest wait between attempts.'),
  },
};

const DEFINITION_MEMBERS: Json = {
  name: { type: 'string', pattern: DEFINITION_NAME_PATTERN, description: 'Unique among the branch\'s task definitions (else 409 `TaskDefinition.NameTaken`).' },
  handler: { type: 'string', description: 'A ScheduledJob, EventConsumer or WebhookHandler handler of the branch\'s serving publication (else 422 `TaskDefinition.HandlerInvalid`).' },
  input: { description: `Any JSON (at most ${L.maxInputBytes} bytes): the handler's input for triggered runs. Default null.` },
  retry: RETRY,
  timeoutSeconds: boundedInt(1, L.maxTimeoutSeconds, `An attempt's time limit. Default ${D.timeoutSeconds}.`),
  overlap: { type: 'string', enum: [...OVERLAP_POLICIES], description: '`skip` (default): no new run while one is queued or running; `queue`: one waits; `allow`: concurrent runs.' },
};

const TRIGGER_MEMBERS: Record<string, Json> = {
  cron: { type: 'string', minLength: 1, maxLength: MAX_CRON_LENGTH, description: '5 fields, or 6 with seconds first.' },
  timezone: { type: 'string', maxLength: MAX_ZONE_LENGTH, description: `IANA time zone. Default ${D.timezone}. A local time skipped by DST does not fire; a repeated one fires once.` },
  intervalSeconds: boundedInt(1, MAX_INTERVAL_SECONDS, 'Seconds between fires; the first is this long after creation.'),
  at: { ...dateTimeSchema(), description: 'The one fire time (a past one fires at once).' },
  entity: { type: 'string', description: 'An entity of the branch\'s serving publication.' },
  kinds: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...EVENT_KINDS] }, description: 'Default: all three.' },
  filter: { type: 'object', description: 'The entity filter realtime subscriptions take (field names only).' },
  receiverId: { ...uuidSchema(), description: 'An inbound webhook receiver of the project.' },
};
const KIND_MEMBERS: Record<string, { required: string[]; optional: string[] }> = {
  cron: { required: ['cron', 'timezone'], optional: [] },
  interval: { required: ['intervalSeconds'], optional: [] },
  once: { required: ['at'], optional: [] },
  event: { required: ['entity', 'kinds'], optional: ['filter'] },
  webhook: { required: ['receiverId'], optional: [] },
};

/** One trigger record per kind: the kind's members and the common ones, nothing else. */
const triggerVariant = (kind: string): Json => {
  const { required, optional } = KIND_MEMBERS[kind]!;
  return {
    type: 'object', additionalProperties: false,
    required: ['id', 'definitionId', 'kind', ...required, 'misfire', 'nextFireAt', 'createdAt'],
    properties: {
      id: uuidSchema(), definitionId: uuidSchema(), kind: { type: 'string', const: kind },
      ...Object.fromEntries([...required, ...optional].map((m) => [m, TRIGGER_MEMBERS[m]!])),
      misfire: { type: 'string', enum: [...MISFIRE_POLICIES] },
      nextFireAt: { type: ['string', 'null'], format: 'date-time', description: 'The next time fire (cron, interval, once); null for event and webhook triggers and for a `once` that fired.' },
      createdAt: at(),
    },
  };
};

/** The control-plane envelope of a list with `page` beside `data`: `page.next` while more remain (pass it as `cursor`). */
export function pagedControlList(surface: string, record: string): Json {
  const e = controlEnvelope(surface, 'listed', { type: 'array', items: schemaRef(record) });
  return {
    ...e, required: [...(e.required as string[]), 'page'], properties: { ...(e.properties as Json), page: schemaRef('Page') },
    description: 'The control-plane envelope with `page`: `page.next` while more remain, passed back as `cursor`.',
  };
}

export const SCHEDULING_DEFINITION_SCHEMAS = defineSchemas({
  ControlTaskDefinition: {
    type: 'object', additionalProperties: false,
    required: ['id', 'name', 'handler', 'input', 'state', 'retry', 'timeoutSeconds', 'overlap', 'createdAt', 'updatedAt'],
    properties: {
      id: uuidSchema(),
      ...DEFINITION_MEMBERS,
      state: { type: 'string', enum: ['active', 'paused'], description: '`paused`: no trigger fires.' },
      retry: { ...RETRY, required: ['maxAttempts', 'backoffSeconds', 'maxBackoffSeconds'] },
      timeoutSeconds: int('Seconds.', 1),
      createdAt: at(),
      updatedAt: at(),
    },
  },
  ControlTaskDefinitionInput: { type: 'object', additionalProperties: false, required: ['name', 'handler'], properties: DEFINITION_MEMBERS },
  ControlTaskTrigger: { oneOf: TRIGGER_KINDS.map(triggerVariant), description: 'A trigger: its kind\'s members besides the common ones.' },
  ControlTaskTriggerInput: {
    type: 'object', additionalProperties: false, required: ['kind'],
    description: 'The kind\'s own members and `misfire`; a member of another kind → 422 `Trigger.UnknownProperty`.',
    properties: {
      kind: { type: 'string', enum: [...TRIGGER_KINDS] },
      ...TRIGGER_MEMBERS,
      misfire: { type: 'string', enum: [...MISFIRE_POLICIES], description: '`fireOnce` (default): one run for all fires missed during downtime or pause; `skip`: none.' },
    },
  },
  ControlTaskDefinitionSingle: controlSingle('TaskDefinition', ['created', 'read', 'updated', 'paused', 'resumed'], 'ControlTaskDefinition'),
  ControlTaskDefinitionList: pagedControlList('TaskDefinition', 'ControlTaskDefinition'),
  ControlTaskTriggerSingle: controlSingle('TaskTrigger', 'created', 'ControlTaskTrigger'),
  ControlTaskTriggerList: controlEnvelope('TaskTrigger', 'listed', { type: 'array', items: schemaRef('ControlTaskTrigger') }),
});
