import { notFound, ServiceError, validationFailed } from '../../errors/service-error.js';
import { readProject } from '../../control/project-store.js';
import { listQuotas, quotaProject, readQuota, type QuotaRecord } from '../../quota/store.js';
import { list as listOf, noContent, single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec, type ProjectRow } from '../types.js';
import type { RouteDecl } from '../contract/index.js';
import { USAGE_SCHEMAS as S } from './usage-schemas.js';
import { usageContract, type UsageContract } from './usage-contract.js';

const MAX_LIST = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

const createOne: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  return single(ctx, view(await ctx.services.control.createQuota(project.id, ctx.inv.body)), 201);
};

const listAll: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  const size = listLimit(ctx);
  const rows = await listQuotas(ctx.services.db, project.id, size);
  return listOf(ctx, rows.map(view), { number: 1, size, totalCount: rows.length });
};

const readOne: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  const q = await readQuota(ctx.services.db, project.id, quotaIdOf(ctx));
  if (q === null) throw missing();
  return single(ctx, view(q));
};

const updateOne = (partial: boolean): OperationSpec['execute'] => async (ctx) => {
  const project = await projectOf(ctx);
  const quotaId = quotaIdOf(ctx);
  // A quota of another project is not found, whatever the scope headers say (isolation).
  if ((await quotaProject(ctx.services.db, quotaId)) !== project.id) throw missing();
  const q = await ctx.services.control.updateQuota(project.id, quotaId, ctx.inv.body, partial);
  if (q === null) throw missing();
  return single(ctx, view(q));
};

const removeOne: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  if (!(await ctx.services.control.deleteQuota(project.id, quotaIdOf(ctx)))) throw missing();
  return noContent;
};

const summarize: OperationSpec['execute'] = async (ctx) => {
  const project = await projectOf(ctx);
  if (ctx.services.quotas === undefined) throw new ServiceError('UNAVAILABLE', 'Quota.Unavailable', 'quotas are not enabled on this node');
  return single(ctx, await ctx.services.quotas.summary(project.id));
};

type QuotaContract = Omit<UsageContract, 'routes' | 'params'>;

/**
 * One quota operation answers on two routes: by the path's project id (no scope headers) and under
 * `/api/usage` by the scope headers (`<id>Scoped`, as `Usage.Events.ListScoped`): two specs, since
 * the scope is the spec's. Admin only, so a project user's token gets 403 at stage 1 (CONTRACT: a
 * quota write by a user → 403).
 */
function quotaPair(id: string, method: RouteDecl['method'], tail: string, contract: QuotaContract, execute: OperationSpec['execute']): [DeclaredSpec, DeclaredSpec] {
  const byPath = usageContract({ ...contract, routes: [{ method, path: `Usage/:projectId/${tail}` }], params: { ...PROJECT_ID, ...QUOTA_ID } });
  const byHeaders = usageContract({
    ...contract, params: QUOTA_ID,
    routes: [{ method, path: `usage/${tail}`, summary: `${contract.summary} (the project of the scope headers)` }],
  });
  return [
    { id, authn: 'admin', scope: 'none', grants: noGrants, execute, contract: byPath },
    { id: `${id}Scoped`, authn: 'admin', scope: 'project', grants: noGrants, execute, contract: byHeaders },
  ];
}

const PROJECT_ID = { projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } };
const QUOTA_ID = { quotaId: { description: 'Quota id (a value that is not a UUID answers 404).', schema: { type: 'string', format: 'uuid' } } };
const QUOTA_REASONS = {
  prefix: 'Quota',
  fields: { kind: 'Quota.UnknownKind', limit: 'Quota.InvalidLimit', mode: 'Quota.UnknownMode', window: 'Quota.UnknownWindow', dimensions: 'Quota.InvalidDimensions' },
};
const READ = [401, 403, 404, 422];
const WRITE = [400, 401, 403, 404, 413, 422];
const WRITE_TEXT = 'A limit above the parent project\'s governance cap answers 422 `Governance.EnvelopeExceeded` (`limit`).';

const [list, scopedList] = quotaPair('Usage.Quotas.List', 'GET', 'quotas', {
  summary: 'The project\'s quotas, oldest first (admin only)',
  query: { limit: { description: 'At most this many (1–1000, default 1000); `pageSize` is taken too.', schema: { type: 'integer', minimum: 1, maximum: MAX_LIST } } },
  output: { status: 200, body: S.UsageQuotaList }, errors: READ,
}, listAll);
const [create, scopedCreate] = quotaPair('Usage.Quotas.Create', 'POST', 'quotas', {
  summary: 'Create a quota (admin only)', description: WRITE_TEXT,
  body: S.UsageQuotaInput, reasons: QUOTA_REASONS, output: { status: 201, body: S.UsageQuotaSingle }, errors: WRITE,
}, createOne);
const [read, scopedRead] = quotaPair('Usage.Quotas.Read', 'GET', 'quotas/:quotaId', {
  summary: 'Read a quota (admin only)', output: { status: 200, body: S.UsageQuotaSingle }, errors: READ,
}, readOne);
const [replace, scopedReplace] = quotaPair('Usage.Quotas.Replace', 'PUT', 'quotas/:quotaId', {
  summary: 'Replace a quota\'s fields (admin only)', description: WRITE_TEXT,
  body: S.UsageQuotaInput, reasons: QUOTA_REASONS, output: { status: 200, body: S.UsageQuotaSingle }, errors: WRITE,
}, updateOne(false));
const [patchByPath, scopedPatch] = quotaPair('Usage.Quotas.Patch', 'PATCH', 'quotas/:quotaId', {
  summary: 'Change the fields of a quota the body names (admin only)', description: WRITE_TEXT,
  body: S.UsageQuotaPatch, reasons: QUOTA_REASONS, output: { status: 200, body: S.UsageQuotaSingle }, errors: WRITE,
}, updateOne(true));
const [remove, scopedDelete] = quotaPair('Usage.Quotas.Delete', 'DELETE', 'quotas/:quotaId', {
  summary: 'Delete a quota (admin only)', output: { status: 204 }, errors: [401, 403, 404],
}, removeOne);
const [summary, scopedSummary] = quotaPair('Usage.Summary', 'GET', 'summary', {
  summary: 'Each quota of the project with its usage in the current window (admin only)',
  description: 'A node without quotas enabled answers 503 `Quota.Unavailable`.',
  output: { status: 200, body: S.UsageQuotaSummary }, errors: READ,
}, summarize);

/** `/api/Usage/{projectId}/quotas…` and `/api/usage/quotas…` (CONTRACT: Usage and quotas). */
export const QUOTA_SPECS = {
  list, create, read, replace, patchByPath, delete: remove, summary,
  scopedList, scopedCreate, scopedRead, scopedReplace, scopedPatch, scopedDelete, scopedSummary,
};
