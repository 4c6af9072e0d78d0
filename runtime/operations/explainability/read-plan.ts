import type { CompiledEntity } from '../../entities/compiled-entity.js';
import { listQuery } from '../../entities/list.js';
import { listGrants, maxPageSizeFor, parseListParams } from '../../entities/list-params.js';
import { validationFailed } from '../../errors/service-error.js';
import { grantFor } from '../../publication/operations.js';
import { single } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import { explainContract } from './explain-contract.js';
import { EXPLAIN_SCHEMAS as S } from './explain-schemas.js';
import { rootPlanOf, summarizePlan } from './plan-summary.js';
import type { EntityArgs } from '../../entities/entity-args.js';

interface PlanRequest {
  entity: CompiledEntity;
  /** The list route's arguments, in their own text forms. */
  args: EntityArgs;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `sort` / `include`: the list route's csv, or an array of its items. */
function csv(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(',');
  throw validationFailed('Explainability.InvalidBody', `${name} must be a string or an array of strings`, name);
}

/**
 * The body in the list route's forms: `filter` as the filter object (or its
 * JSON text), `sort` and `include` as csv or arrays. `entity` is the entity
 * name or its collection. Memoized on the context: stage 4 and the executor
 * both need it. These checks stay here although the contract declares the
 * body: stage 4 (grants) reads the body before the declared schema is checked
 * (just before the executor), so they answer first, with their own reason
 * codes; the schema is no stricter than they are.
 */
const parsed = new WeakMap<OperationContext, PlanRequest>();
function planRequest(ctx: OperationContext): PlanRequest {
  const hit = parsed.get(ctx);
  if (hit !== undefined) return hit;
  const body = ctx.inv.body;
  if (!isObject(body)) throw validationFailed('Explainability.InvalidBody', 'the body must be a JSON object { entity, filter?, sort?, include? }', 'body');
  const name = body.entity;
  if (typeof name !== 'string' || name === '') throw validationFailed('Explainability.EntityRequired', 'entity is required', 'entity');
  const pub = ctx.scope!.publication;
  const entity = pub.entities.get(name) ?? pub.byCollection.get(name);
  if (entity === undefined) throw validationFailed('Explainability.UnknownEntity', `unknown entity '${name}'`, 'entity');
  const args: { filter?: string; sort?: string; include?: string } = {};
  const f = body.filter;
  if (f !== undefined && f !== null) {
    if (typeof f === 'string') args.filter = f;
    else if (isObject(f)) args.filter = JSON.stringify(f);
    else throw validationFailed('Filter.Invalid', 'filter must be an object', 'filter');
  }
  const sort = csv(body, 'sort');
  if (sort !== undefined) args.sort = sort;
  const include = csv(body, 'include');
  if (include !== undefined) args.include = include;
  const req = { entity, args: args as EntityArgs };
  parsed.set(ctx, req);
  return req;
}

/**
 * `POST /api/Explainability/readPlan` `{ entity, filter?, sort?, include? }`:
 * how the list route would read, from the database's own plan of the very
 * SQL the list route runs (listQuery, first page, default page size). Stage
 * 4 asks exactly what the list route asks (read on the entity, on entities
 * its filter reaches, on included relations); invalid filter, sort or
 * include answer the list route's 422.
 */
export const EXPLAIN_READ_PLAN_SPEC: DeclaredSpec = {
  id: 'Explainability.ReadPlan',
  authn: 'user',
  scope: 'project',
  contract: explainContract({
    summary: 'How the list route would read (the database\'s plan, in words)', routes: [{ method: 'POST', path: 'Explainability/readPlan' }],
    body: S.ExplainReadPlanInput,
    reasons: { prefix: 'Explainability', fields: { entity: 'Explainability.EntityRequired', filter: 'Filter.Invalid' } },
    output: { status: 200, body: S.ExplainReadPlan }, errors: [401, 403, 404, 422],
  }),
  grants(ctx) {
    const { entity, args } = planRequest(ctx);
    return [grantFor(entity.entityName, 'read'), ...listGrants(entity, args)];
  },
  async execute(ctx) {
    const { entity, args } = planRequest(ctx);
    const params = parseListParams(entity, args, maxPageSizeFor(ctx));
    // The caller's row policy shapes the plan exactly as it shapes the list route's query.
    const policy = ctx.rowPolicy;
    if (policy !== null) {
      policy.requireLive(entity, 'read');
      policy.guardFilter(entity, params.filter);
      policy.guardSort(entity, params.sort);
    }
    const q = listQuery(entity, params, undefined, policy);
    const db = ctx.services.db;
    const res = await db.query<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values);
    const first = res.rows[0];
    const root = rootPlanOf(first === undefined ? undefined : Object.values(first)[0]);
    const tables = new Map([...ctx.scope!.publication.entities.keys()].map((n) => [n, n]));
    const summary = summarizePlan(root, tables);
    return single(ctx, {
      entity: entity.entityName,
      ...summary,
      pageSize: params.pageSize,
      sort: params.sort.map((k) => `${k.desc ? '-' : ''}${k.field}`),
      // Included relations are read after the page, one query per relation by id (primary key or reference index).
      includes: params.include.map((r) => ({ relation: r.name, entity: r.kind === 'toOne' ? r.target : r.owner, lookup: r.kind === 'toOne' ? 'primary key' : 'reference index' })),
      cacheDecision: { cached: false, reason: 'Cache.NotConfigured' },
      provider: db.backend,
      publicationVersion: ctx.scope!.publication.version,
    });
  },
};
