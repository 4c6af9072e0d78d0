import { notFound, ServiceError, validationFailed } from '../../errors/service-error.js';
import { readProject } from '../../control/project-store.js';
import { listQuotas, quotaProject, readQuota, type QuotaRecord } from '../../quota/store.js';
import { list, noContent, single } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec, type ProjectRow } from '../types.js';

const MAX_LIST = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Admin only: a project user's token gets 403 at stage 1 (CONTRACT: a quota write by a user → 403). */
const byPath = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'none', grants: noGrants, execute });
/** `/api/usage/quotas/…`: the project comes from the scope headers. */
const byHeaders = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

async function pathProject(ctx: OperationContext): Promise<ProjectRow> {
  const p = await readProject(ctx.services.db, null, ctx.inv.params.projectId ?? '');
  if (p === null) throw notFound('Project.NotFound', 'project not found');
  return p;
}

function projectOf(ctx: OperationContext): Promise<ProjectRow> | ProjectRow {
  return ctx.scope !== null ? ctx.scope.project : pathProject(ctx);
}

function quotaIdOf(ctx: OperationContext): string {
  const id = ctx.inv.params.quotaId ?? '';
  if (!UUID.test(id)) throw notFound('Quota.NotFound', 'quota not found');
  return id.toLowerCase();
}

const missing = (): ServiceError => notFound('Quota.NotFound', 'quota not found');

function listLimit(ctx: OperationContext): number {
  const raw = ctx.inv.query.get('limit') ?? ctx.inv.query.get('pageSize');
  if (raw === undefined) return MAX_LIST;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIST) throw validationFailed('Quota.InvalidLimit', `limit must be an integer from 1 to ${MAX_LIST}`, 'limit');
  return n;
}

/** The public shape of a quota (every stored field; nothing secret). */
const view = (q: QuotaRecord): QuotaRecord => q;

const create: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  return single(ctx, view(await ctx.services.control.createQuota(project.id, ctx.inv.body)), 201);
};

const index: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  const size = listLimit(ctx);
  const rows = await listQuotas(ctx.services.db, project.id, size);
  return list(ctx, rows.map(view), { number: 1, size, totalCount: rows.length });
};

const read: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  const q = await readQuota(ctx.services.db, project.id, quotaIdOf(ctx));
  if (q === null) throw missing();
  return single(ctx, view(q));
};

const update = (partial: boolean): OperationSpec['execute'] => async (ctx) => {
  const project = await projectOf(ctx);
  const quotaId = quotaIdOf(ctx);
  // A quota of another project is not found, whatever the scope headers say (isolation).
  if ((await quotaProject(ctx.services.db, quotaId)) !== project.id) throw missing();
  const q = await ctx.services.control.updateQuota(project.id, quotaId, ctx.inv.body, partial);
  if (q === null) throw missing();
  return single(ctx, view(q));
};

const remove: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  if (!(await ctx.services.control.deleteQuota(project.id, quotaIdOf(ctx)))) throw missing();
  return noContent;
};

const summary: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  if (ctx.services.quotas === undefined) throw new ServiceError('UNAVAILABLE', 'Quota.Unavailable', 'quotas are not enabled on this node');
  return single(ctx, await ctx.services.quotas.summary(project.id));
};

/** `/api/Usage/{projectId}/quotas…` and `/api/usage/quotas…` (CONTRACT: Usage and quotas). */
export const QUOTA_SPECS = {
  list: byPath('Usage.Quotas.List', index),
  create: byPath('Usage.Quotas.Create', create),
  read: byPath('Usage.Quotas.Read', read),
  replace: byPath('Usage.Quotas.Replace', update(false)),
  patchByPath: byPath('Usage.Quotas.Patch', update(true)),
  delete: byPath('Usage.Quotas.Delete', remove),
  summary: byPath('Usage.Summary', summary),
  scopedList: byHeaders('Usage.Quotas.List', index),
  scopedCreate: byHeaders('Usage.Quotas.Create', create),
  scopedRead: byHeaders('Usage.Quotas.Read', read),
  scopedReplace: byHeaders('Usage.Quotas.Replace', update(false)),
  scopedPatch: byHeaders('Usage.Quotas.Patch', update(true)),
  scopedDelete: byHeaders('Usage.Quotas.Delete', remove),
  scopedSummary: byHeaders('Usage.Summary', summary),
};
