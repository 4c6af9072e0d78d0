import { validationFailed } from '../../errors/service-error.js';
import { toAuditRecord, type AuditRow } from '../../scheduling/rows.js';
import { TRIGGER_DECISIONS, type TriggerDecision } from '../../scheduling/types.js';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { uuidQuery } from './runs-read.js';
import { seqPage, seqPaging } from './seq-paging.js';
import { RUN_READ_SCHEMAS as S } from './run-read-schemas.js';

const X = PLATFORM_SCHEMA;
const TAG: TagDecl = { name: 'TriggerAudit', description: 'Why each trigger fired or did not, and the scheduler\'s health (CONTRACT "Scheduling").' };

type AuditContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/** Scoped to the request's project (every branch: decisions name their definition), platform admin only. */
const auditOp = (id: string, contract: AuditContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: TAG, errors: READ_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'beta', ...contract },
});

function decisionQuery(ctx: OperationContext): TriggerDecision | null {
  const v = ctx.inv.query.get('decision');
  if (v === undefined || v === '') return null;
  if (!(TRIGGER_DECISIONS as readonly string[]).includes(v)) throw validationFailed('TriggerAudit.InvalidDecision', `decision must be one of ${TRIGGER_DECISIONS.join(', ')}`, 'decision');
  return v as TriggerDecision;
}

const count = (v: unknown): number => Number(v ?? 0);

/** `/api/TriggerAudit/…`. */
export const TRIGGER_AUDIT_SPECS: Record<string, DeclaredSpec> = {
  events: auditOp('ControlPlane.TriggerAudit.Events', {
    summary: 'Page through the project\'s fire decisions, newest first',
    description: 'Each decision a trigger led to (`started` with its `runId`, `skippedOverlap`, `skippedPaused`, `misfireCollapsed`, `misfireSkipped`), ' +
      'newest first: the latest decisions are what a diagnosis wants. Paged like entity lists: `pageSize`, then `cursor` = `page.next` (with the same filters).',
    routes: [{ method: 'GET', path: 'TriggerAudit/Events' }],
    query: {
      definitionId: { description: 'Only decisions of this definition.', schema: { type: 'string', format: 'uuid' } },
      decision: { description: 'Only this decision.', schema: { type: 'string', enum: [...TRIGGER_DECISIONS] } },
    },
    sharedParams: ['PageSize', 'Cursor'],
    output: { status: 200, body: S.ControlTriggerAuditList },
  }, async (ctx) => {
    const definitionId = uuidQuery(ctx, 'definitionId', 'TriggerAudit.InvalidDefinitionId');
    const decision = decisionQuery(ctx);
    const key = JSON.stringify([definitionId, decision]);
    const p = seqPaging(ctx, key);
    const params: unknown[] = [ctx.scope!.project.id];
    const where = ['project_id = $1'];
    if (definitionId !== null) where.push(`definition_id = $${params.push(definitionId)}`);
    if (decision !== null) where.push(`decision = $${params.push(decision)}`);
    if (p.after !== null) where.push(`seq < $${params.push(p.after)}::bigint`);
    const rows = (await ctx.services.db.query<AuditRow>(
      `SELECT seq, at, trigger_id, definition_id, scheduled_for, decision, run_id FROM ${X}.trigger_audit WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ${p.size + 1}`, params,
    )).rows;
    return seqPage(ctx, 'TriggerAudit', rows, p, key, toAuditRecord);
  }),
  summary: auditOp('ControlPlane.TriggerAudit.Summary', {
    summary: 'How many decisions of each kind each definition has',
    routes: [{ method: 'GET', path: 'TriggerAudit/Summary' }],
    output: { status: 200, body: S.ControlTriggerAuditSummary },
  }, async (ctx) => {
    const rows = (await ctx.services.db.query<{ definition_id: string; decision: TriggerDecision; n: string | number }>(
      `SELECT definition_id, decision, count(*) AS n FROM ${X}.trigger_audit WHERE project_id = $1 GROUP BY definition_id, decision ORDER BY definition_id, decision`,
      [ctx.scope!.project.id],
    )).rows;
    return control(ctx, 'TriggerAudit', 'read', rows.map((r) => ({ definitionId: r.definition_id, decision: r.decision, count: count(r.n) })));
  }),
  diagnostics: auditOp('ControlPlane.TriggerAudit.Diagnostics', {
    summary: 'The scanner\'s last scan and lag, and the project\'s queued and running runs',
    description: '`scanner` is null until a scanner has scanned once. `lagMs`: how late, in ms, the latest on-time fire was handled.',
    routes: [{ method: 'GET', path: 'TriggerAudit/Diagnostics' }],
    output: { status: 200, body: S.ControlTriggerAuditDiagnostics },
  }, async (ctx) => {
    const db = ctx.services.db;
    const [scanner, runs] = await Promise.all([
      db.query<{ node: string; last_scan_at: string | Date; lag_ms: number }>(`SELECT node, last_scan_at, lag_ms FROM ${X}.scheduler_state WHERE name = 'scanner'`),
      db.query<{ queued: string | number; running: string | number }>(
        `SELECT count(*) FILTER (WHERE state = 'queued') AS queued, count(*) FILTER (WHERE state = 'running') AS running
         FROM ${X}.task_runs WHERE project_id = $1 AND state IN ('queued', 'running')`, [ctx.scope!.project.id],
      ),
    ]);
    const s = scanner.rows[0];
    return control(ctx, 'TriggerAudit', 'read', {
      scanner: s === undefined ? null : { node: s.node, lastScanAt: new Date(s.last_scan_at).toISOString(), lagMs: Number(s.lag_ms) },
      queued: count(runs.rows[0]?.queued), running: count(runs.rows[0]?.running),
    });
  }),
  clear: auditOp('ControlPlane.TriggerAudit.Clear', {
    summary: 'Delete the project\'s fire decisions',
    routes: [{ method: 'DELETE', path: 'TriggerAudit/Clear' }],
    output: { status: 204 }, errors: [401, 403, 404, 422],
  }, async (ctx) => {
    await ctx.services.db.query(`DELETE FROM ${X}.trigger_audit WHERE project_id = $1`, [ctx.scope!.project.id]);
    return noContent;
  }),
};
