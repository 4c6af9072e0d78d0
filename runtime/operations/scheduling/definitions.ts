import { validationFailed } from '../../errors/service-error.js';
import { parseDefinition, DEFINITION_NAME_PATTERN } from '../../scheduling/definition-body.js';
import {
  createDefinition, deleteDefinition, listDefinitions, readDefinition, setDefinitionState, updateDefinition,
} from '../../scheduling/definitions-store.js';
import { toDefinitionRecord } from '../../scheduling/rows.js';
import { logPageSize } from '../log-paging.js';
import { control, noContent } from '../envelopes.js';
import type { DeclaredSpec, OperationContext, Result } from '../types.js';
import { SCHEDULING_DEFINITION_SCHEMAS as S } from './definition-schemas.js';
import { DEFINITION_ID, pathId, schedulingOp, scopeOf } from './scheduling-op.js';

const REASONS = {
  prefix: 'TaskDefinition',
  fields: {
    name: 'TaskDefinition.InvalidName', handler: 'TaskDefinition.HandlerInvalid', input: 'TaskDefinition.InvalidInput', retry: 'TaskDefinition.InvalidRetry',
    timeoutSeconds: 'TaskDefinition.InvalidTimeout', overlap: 'TaskDefinition.InvalidOverlap',
  },
};
const SURFACE = 'TaskDefinition';
const db = (ctx: OperationContext) => ctx.services.db;
const idOf = (ctx: OperationContext): string => pathId(ctx, 'id', 'TaskDefinition.NotFound', 'task definition');
const body = (ctx: OperationContext) => parseDefinition(ctx.inv.body, ctx.scope!.publication.record.model);

/** Cursors are the base64url of the last name of the page (names are unique on the branch, listed in name order). */
const NAME = new RegExp(DEFINITION_NAME_PATTERN);
function afterNameOf(ctx: OperationContext): string | null {
  const text = ctx.inv.query.get('cursor');
  if (text === undefined || text === '') return null;
  const name = Buffer.from(text, 'base64url').toString('utf8');
  if (!NAME.test(name)) throw validationFailed('Query.InvalidCursor', 'cursor is malformed', 'cursor');
  return name;
}

async function list(ctx: OperationContext): Promise<Result> {
  const size = logPageSize(ctx);
  const page = await listDefinitions(db(ctx), scopeOf(ctx), afterNameOf(ctx), size);
  const last = page.rows[page.rows.length - 1];
  return {
    status: 200,
    body: {
      surface: SURFACE, state: 'listed', correlationId: ctx.inv.correlationId, data: page.rows.map(toDefinitionRecord),
      page: { number: 1, size, ...(page.more && last !== undefined ? { next: Buffer.from(last.name).toString('base64url') } : {}) },
    },
  };
}

/** `/api/scheduling/taskdefinition…` (CONTRACT "Scheduling"; docs/scheduling.md). */
export const DEFINITION_SPECS: Record<string, DeclaredSpec> = {
  create: schedulingOp('ControlPlane.TaskDefinition.Create', {
    summary: 'Create a task definition: a background handler with its input, retry, timeout and overlap policy',
    description: '`handler` names a ScheduledJob, EventConsumer or WebhookHandler handler of the branch\'s serving publication (else 422 `TaskDefinition.HandlerInvalid`); a taken `name` answers 409 `TaskDefinition.NameTaken`.',
    routes: [{ method: 'POST', path: 'scheduling/taskdefinition' }], body: S.ControlTaskDefinitionInput, reasons: REASONS,
    output: { status: 201, body: S.ControlTaskDefinitionSingle },
  }, async (ctx) => control(ctx, SURFACE, 'created', toDefinitionRecord(await createDefinition(db(ctx), scopeOf(ctx), body(ctx))), 201)),
  list: schedulingOp('ControlPlane.TaskDefinition.List', {
    summary: 'Page through the branch\'s task definitions in name order', routes: [{ method: 'GET', path: 'scheduling/taskdefinition' }],
    sharedParams: ['PageSize', 'Cursor'], output: { status: 200, body: S.ControlTaskDefinitionList },
  }, list),
  read: schedulingOp('ControlPlane.TaskDefinition.Read', {
    summary: 'Read a task definition', routes: [{ method: 'GET', path: 'scheduling/taskdefinition/:id' }], params: DEFINITION_ID,
    output: { status: 200, body: S.ControlTaskDefinitionSingle },
  }, async (ctx) => control(ctx, SURFACE, 'read', toDefinitionRecord(await readDefinition(db(ctx), scopeOf(ctx), idOf(ctx))))),
  update: schedulingOp('ControlPlane.TaskDefinition.Update', {
    summary: 'Replace a task definition\'s body (omitted members return to their defaults; state and triggers stay)',
    routes: [{ method: 'PUT', path: 'scheduling/taskdefinition/:id' }], params: DEFINITION_ID, body: S.ControlTaskDefinitionInput, reasons: REASONS,
    output: { status: 200, body: S.ControlTaskDefinitionSingle },
  }, async (ctx) => {
    const id = idOf(ctx);
    return control(ctx, SURFACE, 'updated', toDefinitionRecord(await updateDefinition(db(ctx), scopeOf(ctx), id, body(ctx))));
  }),
  delete: schedulingOp('ControlPlane.TaskDefinition.Delete', {
    summary: 'Delete a task definition: its triggers go, its queued runs are cancelled, a running attempt finishes',
    routes: [{ method: 'DELETE', path: 'scheduling/taskdefinition/:id' }], params: DEFINITION_ID, output: { status: 204 },
  }, async (ctx) => {
    await deleteDefinition(db(ctx), scopeOf(ctx), idOf(ctx));
    return noContent;
  }),
  pause: schedulingOp('ControlPlane.TaskDefinition.Pause', {
    summary: 'Pause a task definition: no trigger fires until it is resumed (pausing a paused one answers it as it is)',
    routes: [{ method: 'POST', path: 'scheduling/taskdefinition/:id/pause' }], params: DEFINITION_ID, output: { status: 200, body: S.ControlTaskDefinitionSingle },
  }, async (ctx) => control(ctx, SURFACE, 'paused', toDefinitionRecord(await setDefinitionState(db(ctx), scopeOf(ctx), idOf(ctx), 'paused')))),
  resume: schedulingOp('ControlPlane.TaskDefinition.Resume', {
    summary: 'Resume a task definition: fires missed while paused are handled by each trigger\'s `misfire`',
    routes: [{ method: 'POST', path: 'scheduling/taskdefinition/:id/resume' }], params: DEFINITION_ID, output: { status: 200, body: S.ControlTaskDefinitionSingle },
  }, async (ctx) => control(ctx, SURFACE, 'resumed', toDefinitionRecord(await setDefinitionState(db(ctx), scopeOf(ctx), idOf(ctx), 'active')))),
};
