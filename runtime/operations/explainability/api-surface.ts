import { notFound, ServiceError, validationFailed } from '../../errors/service-error.js';
import type { CompiledPublication } from '../../publication/compiled-publication.js';
import type { RouteResolution } from '../../services.js';
import { single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { explainContract } from './explain-contract.js';
import { EXPLAIN_SCHEMAS as S } from './explain-schemas.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const BASES = ['/api/', '/v1/'];

/** `/api/orders?x=1` → `['orders']`; a path without a base is read as below `/api`. */
function segmentsOf(route: string): string[] | null {
  const path = route.split(/[?#]/, 1)[0]!;
  const base = BASES.find((b) => path.startsWith(b));
  const below = base !== undefined ? path.slice(base.length) : path.startsWith('/') ? path.slice(1) : path;
  try {
    return below.split('/').map(decodeURIComponent);
  } catch {
    return null;
  }
}

const unknownRoute = (method: string, route: string, why: string): ServiceError =>
  notFound('Explainability.RouteNotFound', `${method} ${route} resolves to no operation: ${why}`);

/** An entity route: the collection names an entity of the caller's live publication, which declares the operation. */
function explainEntityRoute(pub: CompiledPublication, method: string, route: string, m: RouteResolution) {
  const entity = pub.byCollection.get(m.collection!);
  if (entity === undefined) throw unknownRoute(method, route, `no entity has the collection '${m.collection}' in publication ${pub.version}`);
  const kind = m.spec.id.split('.')[2]!;
  const operationId = `Entity.${entity.entityName}.${kind}${m.relation === null ? '' : `.${m.relation}`}`;
  const op = pub.operations.get(operationId);
  if (op === undefined) throw unknownRoute(method, route, `entity ${entity.entityName} has no relation '${m.relation}'`);
  const binding = pub.bindings.find((b) => b.bindingId === `rest:${operationId}`) ?? null;
  return {
    operationId,
    bindingId: `rest:${operationId}`,
    kind: 'entity',
    entity: entity.entityName,
    routeTemplate: `${op.method} ${op.path}`,
    params: m.params,
    authn: 'user',
    requiredGrants: op.requiredGrants,
    // Filters on related entities and includes add read grants per request (stage 4).
    grantsDependOnRequest: kind === 'List' || kind === 'Count' || kind === 'RelationList',
    publicationVersion: pub.version,
    binding,
    reason: `the collection '${m.collection}' is entity ${entity.entityName} in publication ${pub.version}; ${op.method} ${op.path} is its ${kind} operation`,
  };
}

/** A platform route: fixed in the route table, the same for every publication. */
function explainStaticRoute(pub: CompiledPublication, m: RouteResolution) {
  const fixed = m.spec.grants === noGrants;
  return {
    operationId: m.spec.id,
    bindingId: `rest:${m.spec.id}`,
    kind: 'platform',
    entity: null,
    params: m.params,
    authn: m.spec.authn,
    requiredGrants: [] as string[],
    grantsDependOnRequest: !fixed,
    publicationVersion: pub.version,
    binding: null,
    reason: `a platform route (${m.spec.authn === 'admin' ? 'platform admin only' : m.spec.authn === 'public' ? 'public' : 'any authenticated caller'}${fixed ? '' : ', with grants that depend on the request'})`,
  };
}

/**
 * `GET /api/Explainability/apiSurface?route=/api/orders&method=GET`: why a
 * route resolves to an operation, through the REST adapter's own table
 * (Services.routes), then the caller's live publication for entity routes.
 */
export const EXPLAIN_API_SURFACE_SPEC: DeclaredSpec = {
  id: 'Explainability.ApiSurface.Read',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: explainContract({
    summary: 'Why a route resolves to an operation', routes: [{ method: 'GET', path: 'Explainability/apiSurface' }],
    query: {
      route: { description: 'A request path (`/api/orders`).', required: true },
      method: { description: 'HTTP method (default GET).', schema: { type: 'string', enum: [...METHODS] } },
    },
    output: { status: 200, body: S.ExplainApiSurface }, errors: [401, 404, 422],
  }),
  async execute(ctx: OperationContext) {
    const q = ctx.inv.query;
    const route = q.get('route');
    if (route === undefined || route === '') throw validationFailed('Explainability.RouteRequired', 'query parameter route is required', 'route');
    const method = (q.get('method') ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) throw validationFailed('Explainability.InvalidMethod', `method must be one of ${[...METHODS].join(', ')}`, 'method');
    const table = ctx.services.routes;
    if (table === undefined) throw new ServiceError('UNAVAILABLE', 'Explainability.RouteTableUnavailable', 'this node has no REST route table');
    const segs = segmentsOf(route);
    if (segs === null || segs.length === 0 || segs.some((s) => s === '')) throw unknownRoute(method, route, 'the path is malformed');
    const m = table.resolve(method, segs);
    if (m instanceof ServiceError) throw unknownRoute(method, route, m.reasonCode === 'Route.MethodNotAllowed' ? 'the path does not take this method' : 'no route has this path');
    const pub = ctx.scope!.publication;
    const explained = m.collection === null ? explainStaticRoute(pub, m) : explainEntityRoute(pub, method, route, m);
    return single(ctx, { route, method, ...explained });
  },
};
