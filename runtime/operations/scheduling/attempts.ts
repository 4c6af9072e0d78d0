import { notFound, validationFailed } from '../../errors/service-error.js';
import { UUID_TEXT } from '../../control/rows.js';
import { ATTEMPT_COLUMNS, toAttemptRecord, type AttemptRow } from '../../scheduling/rows.js';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS } from '../contract/index.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { ENGINE_SCHEMAS as ES } from './engine-schemas.js';
import { pathId, SCHEDULING_RUNS_TAG } from './runs-trigger.js';

const S = PLATFORM_SCHEMA;
/** Attempts of the branch's runs: an attempt belongs to the branch its run does. */
const OF_BRANCH = `FROM ${S}.task_attempts a JOIN ${S}.task_runs r ON r.id = a.run_id WHERE a.project_id = $1 AND r.branch = $2`;
const COLUMNS = ATTEMPT_COLUMNS.split(', ').map((c) => `a.${c}`).join(', ');

const op = (id: string, contract: Omit<DeclaredSpec['contract'], 'tag' | 'metering' | 'stability' | 'errors'>, execute: DeclaredSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: SCHEDULING_RUNS_TAG, errors: READ_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'experimental', ...contract },
});

const place = (ctx: OperationContext): [string, string] => [ctx.scope!.project.id, ctx.scope!.branch];

/** `GET /api/scheduling/taskattempt?runId=` and `GET taskattempt/{id}` (CONTRACT "Scheduling", TaskAttempt). */
export const ATTEMPT_SPECS = {
  list: op('ControlPlane.TaskAttempt.List', {
    summary: 'A run\'s attempts in order (`?runId=`), or the branch\'s latest attempts',
    routes: [{ method: 'GET', path: 'scheduling/taskattempt' }],
    query: { runId: { description: 'Only this run\'s attempts, first attempt first.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 200, body: ES.ControlTaskAttemptList },
  }, async (ctx) => {
    const runId = ctx.inv.query.get('runId');
    if (runId !== undefined && !UUID_TEXT.test(runId)) throw validationFailed('TaskAttempt.InvalidRunId', '`runId` is a task run id', 'runId');
    const res = runId === undefined
      ? await ctx.services.db.query<AttemptRow>(`SELECT ${COLUMNS} ${OF_BRANCH} ORDER BY a.seq DESC LIMIT $3`, [...place(ctx), ctx.services.limits.maxPageSize])
      : await ctx.services.db.query<AttemptRow>(`SELECT ${COLUMNS} ${OF_BRANCH} AND a.run_id = $3 ORDER BY a.number`, [...place(ctx), runId]);
    return control(ctx, 'TaskAttempt', 'listed', res.rows.map(toAttemptRecord));
  }),
  read: op('ControlPlane.TaskAttempt.Read', {
    summary: 'One attempt', routes: [{ method: 'GET', path: 'scheduling/taskattempt/:id' }],
    params: { id: { description: 'Task attempt id.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 200, body: ES.ControlTaskAttemptSingle },
  }, async (ctx) => {
    const id = pathId(ctx, 'TaskAttempt.NotFound', 'task attempt');
    const row = (await ctx.services.db.query<AttemptRow>(`SELECT ${COLUMNS} ${OF_BRANCH} AND a.id = $3`, [...place(ctx), id])).rows[0];
    if (row === undefined) throw notFound('TaskAttempt.NotFound', 'task attempt does not exist');
    return control(ctx, 'TaskAttempt', 'read', toAttemptRecord(row));
  }),
};
