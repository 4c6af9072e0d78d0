import { ServiceError } from '../../runtime/errors/service-error.js';
import type { EntityOperationKind } from '../../runtime/publication/operations.js';
import type { OperationSpec } from '../../runtime/operations/types.js';
import { ENTITY_SPECS, STATIC_ROUTES } from './routes.js';

export interface RouteMatch {
  spec: OperationSpec;
  params: Record<string, string>;
  collection: string | null;
  relation: string | null;
}

interface Compiled {
  method: string;
  parts: string[];
  spec: OperationSpec;
}

/**
 * A literal segment wins over a parameter in the same position
 * (`events/tail` before `events/:id`), so the order routes are declared in
 * does not matter.
 */
function bySpecificity(a: Compiled, b: Compiled): number {
  for (let i = 0; i < Math.min(a.parts.length, b.parts.length); i++) {
    const pa = a.parts[i]!.startsWith(':');
    const pb = b.parts[i]!.startsWith(':');
    if (pa !== pb) return pa ? 1 : -1;
  }
  return 0;
}

/** Static routes indexed by first segment, compiled once. */
const BY_HEAD = new Map<string, Compiled[]>();
for (const r of STATIC_ROUTES) {
  const parts = r.path.split('/');
  const list = BY_HEAD.get(parts[0]!) ?? [];
  list.push({ method: r.method, parts, spec: r.spec });
  BY_HEAD.set(parts[0]!, list);
}
for (const list of BY_HEAD.values()) list.sort(bySpecificity);

const routeUnknown = (): ServiceError => new ServiceError('NOT_FOUND', 'Route.Unknown', 'no route matches this path');
const methodNotAllowed = (): ServiceError => new ServiceError('METHOD_NOT_ALLOWED', 'Route.MethodNotAllowed', 'this path does not take this method');

function matchStatic(candidates: Compiled[], method: string, segs: string[]): RouteMatch | ServiceError {
  let pathMatched = false;
  for (const c of candidates) {
    if (c.parts.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segs.length; i++) {
      const p = c.parts[i]!;
      if (p.startsWith(':')) params[p.slice(1)] = segs[i]!;
      else if (p !== segs[i]) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    pathMatched = true;
    if (c.method === method) return { spec: c.spec, params, collection: null, relation: null };
  }
  return pathMatched ? methodNotAllowed() : routeUnknown();
}

/** Entity routes by shape; the collection and relation are checked against the publication in stage 2. */
function matchEntity(method: string, segs: string[]): RouteMatch | ServiceError {
  const [collection, a, b, c] = segs as [string, string?, string?, string?];
  const hit = (kind: EntityOperationKind, params: Record<string, string> = {}, relation: string | null = null): RouteMatch => ({
    spec: ENTITY_SPECS[kind], params, collection, relation,
  });
  const pick = (table: Partial<Record<string, () => RouteMatch>>): RouteMatch | ServiceError => table[method]?.() ?? methodNotAllowed();
  switch (segs.length) {
    case 1:
      return pick({ GET: () => hit('List'), POST: () => hit('Create') });
    case 2:
      if (a === 'count') return pick({ GET: () => hit('Count') });
      if (a === 'batch') return pick({ POST: () => hit('BatchCreate'), PATCH: () => hit('BatchUpdate') });
      return pick({ GET: () => hit('Read', { id: a! }), PATCH: () => hit('Update', { id: a! }), PUT: () => hit('Replace', { id: a! }), DELETE: () => hit('Delete', { id: a! }) });
    case 3:
      if (a === 'batch' && b === 'delete') return pick({ POST: () => hit('BatchDelete') });
      return pick({ GET: () => hit('RelationList', { id: a! }, b!), POST: () => hit('RelationAttach', { id: a! }, b!) });
    case 4:
      return pick({ DELETE: () => hit('RelationDetach', { id: a!, relatedId: c! }, b!) });
    default:
      return routeUnknown();
  }
}

/** Resolves a path below the base (`/api` or `/v1`), already split and decoded, to an operation. */
export function route(method: string, segs: string[]): RouteMatch | ServiceError {
  if (segs.length === 0 || segs.some((s) => s === '')) return routeUnknown();
  const candidates = BY_HEAD.get(segs[0]!);
  if (candidates !== undefined) return matchStatic(candidates, method, segs);
  return matchEntity(method, segs);
}
