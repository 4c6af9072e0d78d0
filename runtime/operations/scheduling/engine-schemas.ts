/**
 * Schemas of the run-engine routes (CONTRACT "Scheduling": manual trigger,
 * cancel, attempts), referred to by their contracts in runs-trigger.ts and attempts.ts.
 */
import { uuidSchema } from '../../publication/openapi-components.js';
import { ATTEMPT_STATES, RUN_CAUSES, RUN_STATES } from '../../scheduling/types.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlList, controlSingle, int } from '../control/control-schemas.js';

const runError = { type: 'object', description: 'What ended it: `{ code, reasonCode, message }`.' };

export const ENGINE_SCHEMAS = defineSchemas({
  ControlTaskRun: {
    type: 'object', additionalProperties: false,
    required: ['id', 'definitionId', 'triggerId', 'cause', 'scheduledFor', 'state', 'attempts', 'input', 'createdAt'],
    properties: {
      id: uuidSchema(), definitionId: uuidSchema(), triggerId: { type: ['string', 'null'], format: 'uuid', description: 'Null for a manual run.' },
      cause: { type: 'string', enum: [...RUN_CAUSES] }, scheduledFor: at(), state: { type: 'string', enum: [...RUN_STATES] },
      attempts: int('Attempts started so far.'), input: { description: 'The handler\'s input.' }, output: { description: 'The successful attempt\'s return value.' },
      error: runError, eventId: uuidSchema(), createdAt: at(), startedAt: at(), finishedAt: at(),
    },
  },
  ControlTaskAttempt: {
    type: 'object', additionalProperties: false, required: ['id', 'runId', 'number', 'state', 'node', 'startedAt'],
    properties: {
      id: uuidSchema(), runId: uuidSchema(), number: int('1 for the first attempt.', 1), state: { type: 'string', enum: [...ATTEMPT_STATES] },
      node: { type: 'string', description: 'The node that ran it.' }, startedAt: at(), finishedAt: at(), error: runError,
    },
  },
  ControlTaskRunTriggerInput: {
    type: 'object', additionalProperties: false,
    properties: { input: { description: 'The handler\'s input; default the definition\'s.' } },
  },
  ControlTaskRunQueued: controlSingle('TaskRun', 'queued', 'ControlTaskRun'),
  ControlTaskRunCancelled: controlSingle('TaskRun', ['cancelled', 'cancelRequested'], 'ControlTaskRun'),
  ControlTaskAttemptSingle: controlSingle('TaskAttempt', 'read', 'ControlTaskAttempt'),
  ControlTaskAttemptList: controlList('TaskAttempt', 'ControlTaskAttempt'),
});
