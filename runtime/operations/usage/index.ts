import { readProject } from '../../control/project-store.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { listUsageEvents, readRollups, type UsagePosition } from '../../usage/usage-store.js';
import { isUsageWindow, type UsageWindow } from '../../usage/windows.js';
import { list } from '../envelopes.js';
import { logPageSize } from '../log-paging.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import type { ParamDecl, RouteDecl } from '../contract/index.js';
import { USAGE_SCHEMAS as S } from './usage-schemas.js';
import { usageContract, type UsageContract } from './usage-contract.js';

const MAX_BIGINT = 9223372036854775807n;
/** ISO 8601 UTC-or-offset date or date-time; anything else is refused before SQL sees it. */
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const KIND = /^[a-z][a-z0-9_.-]{0,99}$/;
const OPERATION_ID = /^[A-Za-z][A-Za-z0-9_.-]{0,199}$/;

function instant(ctx: OperationContext, name: string): string | null {
  const v = ctx.inv.query.get(name);
  if (v === undefined) return null;
  if (!INSTANT.test(v) || Number.isNaN(Date.parse(v))) throw validationFailed('Usage.InvalidInstant', `${name} must be an ISO 8601 date-time`, name);
  return new Date(v).toISOString();
}

function matching(ctx: OperationContext, name: string, pattern: RegExp, reason: string): string | null {
  const v = ctx.inv.query.get(name);
  if (v === undefined) return null;
  if (!pattern.test(v)) throw validationFailed(reason, `${name} is malformed`, name);
  return v;
}

/**
 * Cursors are base64url of `<at ISO>|<source><id>` (source `a` or `e`, usage-store.ts), the
 * position of the last event of the page: opaque to clients, checked strictly here.
 */
const encodeCursor = (p: UsagePosition): string => Buffer.from(`${p.at}|${p.src}${p.id}`).toString('base64url');

function decodeCursor(text: string | undefined): UsagePosition | null {
  if (text === undefined || text === '') return null;
  const bad = (): never => {
    throw validationFailed('Query.InvalidCursor', 'cursor is malformed', 'cursor');
  };
  const [at, pos, rest] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const m = pos === undefined ? null : /^([ae])(\d{1,19})$/.exec(pos);
  if (rest !== undefined || at === undefined || m === null || BigInt(m[2]!) > MAX_BIGINT) return bad();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(at) || Number.isNaN(Date.parse(at))) return bad();
  return { at, src: m[1] as UsagePosition['src'], id: m[2]! };
}

/** The project a usage route reads: the path's `{projectId}` (admin, no scope headers) or the scope headers' project. */
async function projectOf(ctx: OperationContext): Promise<string> {
  if (ctx.scope !== null) return ctx.scope.project.id;
  const project = await readProject(ctx.services.db, null, ctx.inv.params.projectId ?? '');
  if (project === null) throw notFound('Project.NotFound', 'project not found');
  return project.id;
}

const listEvents = async (ctx: OperationContext) => {
  const q = ctx.inv.query;
  const pageSize = logPageSize(ctx);
  const filters = {
    kind: matching(ctx, 'kind', KIND, 'Usage.InvalidKind'),
    operationId: matching(ctx, 'operationId', OPERATION_ID, 'Usage.InvalidOperationId'),
    from: instant(ctx, 'from'),
    to: instant(ctx, 'to'),
  };
  const after = decodeCursor(q.get('cursor'));
  const projectId = await projectOf(ctx);
  const res = await listUsageEvents(ctx.services.db, projectId, { ...filters, after, pageSize });
  const last = res.rows[res.rows.length - 1];
  return list(ctx, res.rows.map((r) => r.event), { number: 1, size: pageSize, ...(res.more && last !== undefined ? { next: encodeCursor(last.position) } : {}) });
};

const listRollups = async (ctx: OperationContext) => {
  const w = ctx.inv.query.get('window') ?? 'calendar-month';
  if (!isUsageWindow(w)) throw validationFailed('Usage.InvalidWindow', "window is one of 'hour', 'day', 'calendar-month'", 'window');
  const kind = matching(ctx, 'kind', KIND, 'Usage.InvalidKind');
  const from = instant(ctx, 'from');
  const to = instant(ctx, 'to');
  const projectId = await projectOf(ctx);
  const rows = await readRollups(ctx.services.db, projectId, w as UsageWindow, kind, from, to);
  return { status: 200, body: { data: rows, meta: { correlationId: ctx.inv.correlationId } } };
};

const ERRORS = [401, 403, 404, 422];
const PROJECT_ID = { projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } };
const KIND_PARAM: ParamDecl = { description: 'Only this kind.' };
const FROM: ParamDecl = { description: 'At or after this instant (ISO 8601).', schema: { type: 'string', format: 'date-time' } };
const TO: ParamDecl = { description: 'Before this instant (ISO 8601).', schema: { type: 'string', format: 'date-time' } };
const EVENTS: Omit<UsageContract, 'routes' | 'params'> = {
  summary: 'Usage events of the project in time order (admin only)',
  query: { kind: KIND_PARAM, operationId: { description: 'Only this operation id.' }, from: FROM, to: TO },
  sharedParams: ['PageSize', 'Cursor'],
  output: { status: 200, body: S.UsageEventList }, errors: ERRORS,
};
const ROLLUPS: Omit<UsageContract, 'routes' | 'params'> = {
  summary: 'Usage per kind and window start; totals equal the events (admin only)',
  query: { window: { description: 'Rollup window (default `calendar-month`).', schema: { type: 'string', enum: ['hour', 'day', 'calendar-month'] } }, kind: KIND_PARAM, from: FROM, to: TO },
  output: { status: 200, body: S.UsageRollupList }, errors: ERRORS,
};

/**
 * Usage of a project: admin only (a project's own users do not read its
 * metering), by the path's project id or (`/api/usage/…`) the scope headers'.
 */
function usageOp(id: string, route: RouteDecl, contract: Omit<UsageContract, 'routes' | 'params'>, execute: OperationSpec['execute']): DeclaredSpec {
  const byPath = route.path.includes(':projectId');
  return {
    id, authn: 'admin', scope: byPath ? 'none' : 'project', grants: noGrants, execute,
    contract: usageContract({ ...contract, routes: [route], ...(byPath ? { params: PROJECT_ID } : {}) }),
  };
}

export const USAGE_SPECS = {
  /** `GET /api/Usage/{projectId}/events?kind=&operationId=&from=&to=&pageSize=&cursor=`. */
  events: usageOp('Usage.Events.List', { method: 'GET', path: 'Usage/:projectId/events' }, EVENTS, listEvents),
  /** `GET /api/usage/events` with the scope headers. */
  scopedEvents: usageOp('Usage.Events.ListScoped', { method: 'GET', path: 'usage/events' }, EVENTS, listEvents),
  /** `GET /api/Usage/{projectId}/rollups?window=&kind=&from=&to=`. */
  rollups: usageOp('Usage.Rollups.List', { method: 'GET', path: 'Usage/:projectId/rollups' }, ROLLUPS, listRollups),
  /** `GET /api/usage/rollups` with the scope headers. */
  scopedRollups: usageOp('Usage.Rollups.ListScoped', { method: 'GET', path: 'usage/rollups' }, ROLLUPS, listRollups),
};

export { QUOTA_SPECS } from './quotas.js';
