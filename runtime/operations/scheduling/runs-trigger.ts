import { conflict, notFound, validationFailed } from '../../errors/service-error.js';
import { UUID_TEXT } from '../../control/rows.js';
import { enqueueRun, recordTriggerDecision } from '../../scheduling/enqueue.js';
import { recordRunEvent } from '../../scheduling/run-events.js';
import { DEFINITION_COLUMNS, toRunRecord, type DefinitionRow, type RunRow } from '../../scheduling/rows.js';
import { FINISHED_RUN_STATES, SCHEDULING_LIMITS } from '../../scheduling/types.js';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../../storage/index.js';
import { CONTROL_PLANE_UNMETERED, WRITE_ERRORS, type TagDecl } from '../contract/index.js';
import { control } from '../envelopes.js';
import { checkIdempotencyKey, runIdempotent } from '../entity/index.js';
import { noGrants, type DeclaredSpec, type OperationContext, type Result } from '../types.js';
import { ENGINE_SCHEMAS as ES } from './engine-schemas.js';

const S = PLATFORM_SCHEMA;
const RUN_COLUMNS = 'id, definition_id, trigger_id, cause, scheduled_for, state, attempts, input, output, error, event_id, created_at, started_at, finished_at';

export const SCHEDULING_RUNS_TAG: TagDecl = { name: 'Scheduling', description: 'Task definitions, triggers, runs and attempts (CONTRACT "Scheduling").' };

/** A path id that cannot be a uuid names nothing: 404 like an unknown one. */
export function pathId(ctx: OperationContext, reason: string, what: string): string {
  const id = ctx.inv.params.id ?? ctx.inv.params.definitionId ?? '';
  if (!UUID_TEXT.test(id)) throw notFound(reason, `${what} does not exist`);
  return id;
}

async function definitionOf(db: SqlExecutor, ctx: OperationContext, id: string): Promise<DefinitionRow> {
  const res = await db.query<DefinitionRow>(
    `SELECT ${DEFINITION_COLUMNS} FROM ${S}.task_definitions WHERE id = $1 AND project_id = $2 AND branch = $3 AND deleted_at IS NULL`,
    [id, ctx.scope!.project.id, ctx.scope!.branch],
  );
  const row = res.rows[0];
  if (row === undefined) throw notFound('TaskDefinition.NotFound', 'task definition does not exist');
  return row;
}

/** The run's input: the body's `input` when given, else the definition's. */
function inputOf(ctx: OperationContext, def: DefinitionRow): unknown {
  const body = (ctx.inv.body ?? {}) as { input?: unknown };
  const input = Object.prototype.hasOwnProperty.call(body, 'input') ? body.input : def.input;
  if (Buffer.byteLength(JSON.stringify(input ?? null)) > SCHEDULING_LIMITS.maxInputBytes) {
    throw validationFailed('TaskRun.InputTooLarge', `the input is larger than ${SCHEDULING_LIMITS.maxInputBytes} bytes`, 'input');
  }
  return input ?? null;
}

/** Queues the manual run and its `started` audit row in one transaction (the idempotency claim's, when keyed). */
async function queue(ctx: OperationContext, tx: SqlExecutor, definitionId: string): Promise<Result> {
  const def = await definitionOf(tx, ctx, definitionId);
  if (def.state === 'paused') throw conflict('TaskDefinition.Paused', 'the task definition is paused');
  const scheduledFor = new Date();
  const out = await enqueueRun(tx, {
    definition: { id: def.id, tenantId: def.tenant_id, projectId: def.project_id, branch: def.branch, overlap: def.overlap, retry: def.retry },
    triggerId: null, cause: 'manual', scheduledFor, input: inputOf(ctx, def), correlationId: ctx.inv.correlationId,
  });
  if (out.decision !== 'started') throw conflict('TaskRun.OverlapSkipped', 'a run of this definition is queued or running and its overlap is `skip`');
  await recordTriggerDecision(tx, { projectId: def.project_id, definitionId: def.id, triggerId: null, scheduledFor, decision: 'started', runId: out.run.id });
  return control(ctx, 'TaskRun', 'queued', out.run, 202);
}

/** A running run is asked to stop (its worker stops it within 1 s); a queued one is cancelled at once; a finished one → 409. */
async function cancel(ctx: OperationContext): Promise<Result> {
  const id = pathId(ctx, 'TaskRun.NotFound', 'task run');
  const { row, ended } = await ctx.services.db.transaction(async (tx) => {
    const found = (await tx.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM ${S}.task_runs WHERE id = $1 AND project_id = $2 AND branch = $3 FOR UPDATE`, [id, ctx.scope!.project.id, ctx.scope!.branch])).rows[0];
    if (found === undefined) throw notFound('TaskRun.NotFound', 'task run does not exist');
    if (FINISHED_RUN_STATES.includes(found.state)) throw conflict('TaskRun.Finished', `the run is already ${found.state}`);
    const queued = found.state === 'queued';
    const upd = await tx.query<RunRow>(
      `UPDATE ${S}.task_runs SET cancel_requested = true${queued ? `, state = 'cancelled', finished_at = now()` : ''} WHERE id = $1 RETURNING ${RUN_COLUMNS}`, [id],
    );
    if (queued) await recordRunEvent(tx, id, 'cancelled', ctx.inv.correlationId, ctx.scope!.publication.version);
    return { row: upd.rows[0]!, ended: queued };
  });
  if (ended) ctx.services.outbox.kick();
  return control(ctx, 'TaskRun', ended ? 'cancelled' : 'cancelRequested', toRunRecord(row));
}

const op = (id: string, contract: Omit<DeclaredSpec['contract'], 'tag' | 'metering' | 'stability' | 'errors'> & Partial<Pick<DeclaredSpec['contract'], 'metering' | 'errors'>>, execute: DeclaredSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: SCHEDULING_RUNS_TAG, errors: WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'experimental', ...contract },
});

/** `POST /api/scheduling/taskrun/{definitionId}/trigger` and `POST taskrun/{id}/cancel` (CONTRACT "Scheduling"). */
export const RUN_ENGINE_SPECS = {
  trigger: op('ControlPlane.TaskRun.Trigger', {
    summary: 'Queue a manual run of a task definition',
    description: 'Answers 202 with the queued run (`input` = the body\'s, else the definition\'s). A paused definition → 409 `TaskDefinition.Paused`; '
      + 'overlap `skip` with a run queued or running → 409 `TaskRun.OverlapSkipped`. `Idempotency-Key` as on create.',
    routes: [{ method: 'POST', path: 'scheduling/taskrun/:definitionId/trigger' }],
    params: { definitionId: { description: 'Task definition id.', schema: { type: 'string', format: 'uuid' } } },
    sharedParams: ['IdempotencyKey'], body: ES.ControlTaskRunTriggerInput, reasons: { prefix: 'TaskRun', fields: { input: 'TaskRun.InvalidInput' } },
    output: { status: 202, body: ES.ControlTaskRunQueued },
    // CONTRACT "Usage and quotas": a run counts `task.runs`; a `task.runs.monthly` quota refuses a manual run with 429 before it is queued.
    metering: { unit: 'task.runs.monthly' }, errors: [...WRITE_ERRORS, 429],
  }, async (ctx) => {
    const definitionId = pathId(ctx, 'TaskDefinition.NotFound', 'task definition');
    const key = ctx.inv.idempotencyKey === null ? null : checkIdempotencyKey(ctx.inv.idempotencyKey);
    const result = key === null ? await ctx.services.db.transaction((tx) => queue(ctx, tx, definitionId)) : await runIdempotent(ctx, key, (tx) => queue(ctx, tx, definitionId));
    ctx.services.scheduling?.kick();
    return result;
  }),
  cancel: op('ControlPlane.TaskRun.Cancel', {
    summary: 'Cancel a run',
    description: 'A queued run is cancelled at once (`state: "cancelled"`); a running one is asked to stop (`state: "cancelRequested"`): its attempt is stopped within 1 s and its transaction rolled back, '
      + 'then the run is `cancelled`. A finished run → 409 `TaskRun.Finished`.',
    routes: [{ method: 'POST', path: 'scheduling/taskrun/:id/cancel' }],
    params: { id: { description: 'Task run id.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 200, body: ES.ControlTaskRunCancelled },
  }, cancel),
};
