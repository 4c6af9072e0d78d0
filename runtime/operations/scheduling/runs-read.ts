import { notFound, validationFailed } from '../../errors/service-error.js';
import { UUID_RE } from '../../identity/index.js';
import { toRunRecord, type RunRow } from '../../scheduling/rows.js';
import { RUN_STATES, type RunState } from '../../scheduling/types.js';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { seqPage, seqPaging } from './seq-paging.js';
import { RUN_READ_SCHEMAS as S } from './run-read-schemas.js';

const TAG: TagDecl = { name: 'TaskRun', description: 'Runs of task definitions: scheduled, event, webhook and manual (CONTRACT "Scheduling").' };
const RUN_COLUMNS = 'seq, id, definition_id, trigger_id, cause, scheduled_for, state, attempts, input, output, error, event_id, created_at, started_at, finished_at';

type RunContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'>;

/** Project- and branch-scoped (X-Service-Branch, as definitions are), platform admin only. */
const runOp = (id: string, contract: RunContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: TAG, errors: READ_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'beta', ...contract },
});

/** An optional uuid query parameter, lower-cased; 422 when malformed. */
export function uuidQuery(ctx: OperationContext, name: string, reason: string): string | null {
  const v = ctx.inv.query.get(name);
  if (v === undefined || v === '') return null;
  if (!UUID_RE.test(v)) throw validationFailed(reason, `${name} must be a UUID`, name);
  return v.toLowerCase();
}

function stateQuery(ctx: OperationContext): RunState | null {
  const v = ctx.inv.query.get('state');
  if (v === undefined || v === '') return null;
  if (!(RUN_STATES as readonly string[]).includes(v)) throw validationFailed('TaskRun.InvalidState', `state must be one of ${RUN_STATES.join(', ')}`, 'state');
  return v as RunState;
}

type SeqRunRow = RunRow & { seq: string };

export const RUN_READ_SPECS: Record<string, DeclaredSpec> = {
  /** `GET /api/scheduling/taskrun?definitionId=&state=&pageSize=&cursor=`: the branch's runs, oldest first. */
  list: runOp('ControlPlane.TaskRun.List', {
    summary: 'Page through the runs of the project\'s branch, oldest first',
    description: 'Runs in the order they were made. Paged like entity lists: `pageSize`, then `cursor` = `page.next` (with the same filters) while more remain.',
    routes: [{ method: 'GET', path: 'scheduling/taskrun' }],
    query: {
      definitionId: { description: 'Only runs of this definition.', schema: { type: 'string', format: 'uuid' } },
      state: { description: 'Only runs in this state.', schema: { type: 'string', enum: [...RUN_STATES] } },
    },
    sharedParams: ['PageSize', 'Cursor'],
    output: { status: 200, body: S.ControlTaskRunList },
  }, async (ctx) => {
    const definitionId = uuidQuery(ctx, 'definitionId', 'TaskRun.InvalidDefinitionId');
    const state = stateQuery(ctx);
    const key = JSON.stringify([definitionId, state]);
    const p = seqPaging(ctx, key);
    const params: unknown[] = [ctx.scope!.project.id, ctx.scope!.branch];
    const where = ['project_id = $1', 'branch = $2'];
    if (definitionId !== null) where.push(`definition_id = $${params.push(definitionId)}`);
    if (state !== null) where.push(`state = $${params.push(state)}`);
    if (p.after !== null) where.push(`seq > $${params.push(p.after)}::bigint`);
    const rows = (await ctx.services.db.query<SeqRunRow>(
      `SELECT ${RUN_COLUMNS} FROM ${PLATFORM_SCHEMA}.task_runs WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${p.size + 1}`, params,
    )).rows;
    return seqPage(ctx, 'TaskRun', rows, p, key, toRunRecord);
  }),
  read: runOp('ControlPlane.TaskRun.Read', {
    summary: 'Read a run',
    routes: [{ method: 'GET', path: 'scheduling/taskrun/:id' }],
    params: { id: { description: 'Run id.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 200, body: S.ControlTaskRunSingle },
  }, async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    const row = UUID_RE.test(id) ? (await ctx.services.db.query<SeqRunRow>(
      `SELECT ${RUN_COLUMNS} FROM ${PLATFORM_SCHEMA}.task_runs WHERE project_id = $1 AND branch = $2 AND id = $3::uuid`, [ctx.scope!.project.id, ctx.scope!.branch, id],
    )).rows[0] : undefined;
    if (row === undefined) throw notFound('TaskRun.NotFound', 'no run with this id in this project and branch');
    return control(ctx, 'TaskRun', 'read', toRunRecord(row));
  }),
};
