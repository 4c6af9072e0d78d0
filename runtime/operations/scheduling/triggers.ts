import { readReceiver } from '../../webhooks/inbound/store.js';
import { addTrigger, deleteTrigger, listTriggers } from '../../scheduling/definitions-store.js';
import { parseTrigger, type TriggerChecks } from '../../scheduling/trigger-spec.js';
import { toTriggerRecord } from '../../scheduling/rows.js';
import { SCHEDULING_LIMITS } from '../../scheduling/types.js';
import { control, noContent } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import { SCHEDULING_DEFINITION_SCHEMAS as S } from './definition-schemas.js';
import { DEFINITION_ID, pathId, schedulingOp, scopeOf } from './scheduling-op.js';

const REASONS = {
  prefix: 'Trigger',
  fields: {
    kind: 'Trigger.InvalidKind', cron: 'Trigger.InvalidCron', timezone: 'Trigger.InvalidTimeZone', intervalSeconds: 'Trigger.InvalidInterval', at: 'Trigger.InvalidAt',
    entity: 'Trigger.UnknownEntity', kinds: 'Trigger.InvalidKinds', filter: 'Filter.InvalidFilter', receiverId: 'Trigger.UnknownReceiver', misfire: 'Trigger.InvalidMisfire',
  },
};
const SURFACE = 'TaskTrigger';
const TRIGGER_PARAMS = { ...DEFINITION_ID, triggerId: { description: 'Trigger id.', schema: { type: 'string', format: 'uuid' } } };
const definitionIdOf = (ctx: OperationContext): string => pathId(ctx, 'id', 'TaskDefinition.NotFound', 'task definition');

function checksOf(ctx: OperationContext): TriggerChecks {
  const scope = ctx.scope!;
  return {
    entity: (name) => scope.publication.entities.get(name),
    receiverExists: async (id) => (await readReceiver(ctx.services.db, scope.project.id, id)) !== null,
    now: new Date(),
  };
}

/** `/api/scheduling/taskdefinition/{id}/triggers…` (CONTRACT "Scheduling", Triggers). */
export const TRIGGER_SPECS: Record<string, DeclaredSpec> = {
  create: schedulingOp('ControlPlane.TaskTrigger.Create', {
    summary: 'Add a trigger to a task definition: cron, interval, once, event or webhook',
    description: `A bad cron, zone, entity, filter or receiver answers 422 VALIDATION_FAILED naming the field. At most ${SCHEDULING_LIMITS.maxTriggers} triggers per definition (else 422 \`Trigger.TooMany\`).`,
    routes: [{ method: 'POST', path: 'scheduling/taskdefinition/:id/triggers' }], params: DEFINITION_ID, body: S.ControlTaskTriggerInput, reasons: REASONS,
    output: { status: 201, body: S.ControlTaskTriggerSingle },
  }, async (ctx) => {
    const definitionId = definitionIdOf(ctx);
    const trigger = await parseTrigger(ctx.inv.body, checksOf(ctx));
    return control(ctx, SURFACE, 'created', toTriggerRecord(await addTrigger(ctx.services.db, scopeOf(ctx), definitionId, trigger)), 201);
  }),
  list: schedulingOp('ControlPlane.TaskTrigger.List', {
    summary: 'A task definition\'s triggers, oldest first', routes: [{ method: 'GET', path: 'scheduling/taskdefinition/:id/triggers' }], params: DEFINITION_ID,
    output: { status: 200, body: S.ControlTaskTriggerList },
  }, async (ctx) => control(ctx, SURFACE, 'listed', (await listTriggers(ctx.services.db, scopeOf(ctx), definitionIdOf(ctx))).map(toTriggerRecord))),
  delete: schedulingOp('ControlPlane.TaskTrigger.Delete', {
    summary: 'Remove a trigger from a task definition', routes: [{ method: 'DELETE', path: 'scheduling/taskdefinition/:id/triggers/:triggerId' }], params: TRIGGER_PARAMS,
    output: { status: 204 },
  }, async (ctx) => {
    const definitionId = definitionIdOf(ctx);
    await deleteTrigger(ctx.services.db, scopeOf(ctx), definitionId, pathId(ctx, 'triggerId', 'Trigger.NotFound', 'trigger'));
    return noContent;
  }),
};
