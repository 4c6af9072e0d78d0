import { httpStatusOf } from '../errors/envelope.js';
import { accessDenied, notFound, validationFailed, ServiceError } from '../errors/service-error.js';
import { dispatchNested, type Outcome } from '../dispatch-stages.js';
import { entityArgsOf } from '../mcp/tools.js';
import { ENTITY_SPECS } from '../operations/entity/index.js';
import { PLATFORM_ADMIN, type Invocation, type OperationContext, type OperationSpec } from '../operations/types.js';
import type { EntityOperationKind } from '../publication/operations.js';
import type { Services } from '../services.js';
import type { InvocationTx } from './invocation-tx.js';
import type { HandlerSurface, HostAnswer, HostBridge, HostCall, HostError } from './types.js';

/** Host targets another part plugs in (`log.info`, `fetch`, …): each answers one call. */
export type HostTargets = Readonly<Record<string, (call: HostCall) => Promise<HostAnswer>>>;

const NO_QUERY: ReadonlyMap<string, string> = new Map();

/** How a `ctx.db.<plural>.<method>(…)` call becomes an entity operation (REST's, with REST's arguments). */
interface DbMethod {
  kind: EntityOperationKind;
  write: boolean;
  build(args: unknown[]): Pick<Invocation, 'params' | 'body' | 'ifMatch'> & { args?: Invocation['args'] };
}

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
/** A row id argument: what the handler passed, as text (the executor checks its shape and answers REST's 404 or 422). */
const idOf = (v: unknown): string => {
  if (typeof v !== 'string' && typeof v !== 'number') throw validationFailed('Handler.InvalidArgument', 'the row id must be a string', 'id');
  return String(v);
};

const DB_METHODS: Readonly<Record<string, DbMethod>> = {
  list: { kind: 'List', write: false, build: (a) => ({ params: {}, body: undefined, ifMatch: null, args: entityArgsOf(obj(a[0])) }) },
  get: { kind: 'Read', write: false, build: (a) => ({ params: { id: idOf(a[0]) }, body: undefined, ifMatch: null, args: entityArgsOf(obj(a[1])) }) },
  count: { kind: 'Count', write: false, build: (a) => ({ params: {}, body: undefined, ifMatch: null, args: entityArgsOf({ filter: a[0] }) }) },
  create: { kind: 'Create', write: true, build: (a) => ({ params: {}, body: a[0], ifMatch: null }) },
  update: {
    kind: 'Update', write: true,
    build: (a) => {
      const ifMatch = obj(a[2]).ifMatch;
      return { params: { id: idOf(a[0]) }, body: a[1], ifMatch: typeof ifMatch === 'string' ? ifMatch : null };
    },
  },
  delete: { kind: 'Delete', write: true, build: (a) => ({ params: { id: idOf(a[0]) }, body: undefined, ifMatch: null }) },
};

/** `ctx.platform.<area>.<method>` (ManagementHandler): the platform route it runs, as the admin. */
const PLATFORM_CALLS: Readonly<Record<string, (args: unknown[]) => { method: string; segs: string[]; body?: unknown }>> = {
  'branches.list': () => ({ method: 'GET', segs: ['branches'] }),
  'branches.create': (a) => ({ method: 'POST', segs: ['branches'], body: a[0] }),
  'schema.entities': () => ({ method: 'GET', segs: ['Schema', 'entities', 'metadata'] }),
  'schema.handlers': () => ({ method: 'GET', segs: ['Schema', 'handlers'] }),
  'publications.latest': () => ({ method: 'GET', segs: ['Explainability', 'publication', 'latest'] }),
  'publications.get': (a) => ({ method: 'GET', segs: ['Explainability', 'publication', String(a[0])] }),
};

export const hostError = (err: ServiceError): HostError => ({
  code: err.code, reasonCode: err.reasonCode, message: err.message, status: httpStatusOf(err),
  ...(err.details.field === undefined ? {} : { field: err.details.field }),
});
const refused = (err: ServiceError): HostAnswer => ({ ok: false, error: hostError(err) });
/** A dispatched call's answer as the sandbox sees it: REST's response body, or the refusal. A 204 answers null. */
const answerOf = (out: Outcome): HostAnswer => (out.ok ? { ok: true, value: out.result.status === 204 ? null : out.result.body ?? null } : refused(out.error));

export interface BridgeOptions {
  /** The operation's request, past stages 1 and 2: its actor and scope are every nested call's. */
  parent: OperationContext;
  surface: HandlerSurface;
  /** CoreHandler: the invocation's transaction (its `services.db`); otherwise absent. */
  tx?: InvocationTx;
  /** `log.*`, `fetch`, …: plugged in by the evidence and egress parts. */
  targets?: HostTargets;
}

/**
 * The host side of one invocation (CONTRACT "Handlers", Authority): `ctx.db`
 * calls go through the dispatch pipeline with the caller's authority (its
 * actor, scope, grants, row policy, masks, quotas: a handler never grants what
 * its caller lacks), each with its own audit row under the request's
 * correlationId; `ctx.platform` calls (ManagementHandler) run as the platform
 * admin. Refusals answer `{ ok: false, error }`; nothing throws.
 */
export function hostBridge(o: BridgeOptions): HostBridge {
  const services: Services = o.tx === undefined ? o.parent.services : { ...o.parent.services, db: o.tx };
  const base = o.parent.inv;
  const invocation = (part: Pick<Invocation, 'operation'> & Partial<Invocation>): Invocation => ({
    correlationId: base.correlationId, protocol: 'rest', collection: null, relation: null, params: {}, query: NO_QUERY, body: undefined,
    bearer: null, tenantHeader: base.tenantHeader, projectHeader: base.projectHeader, branchHeader: base.branchHeader,
    idempotencyKey: null, ifMatch: null, basePath: base.basePath, clientAddress: base.clientAddress ?? null,
    ...(base.signal === undefined ? {} : { signal: base.signal }),
    ...part,
  });

  async function db(collection: string, method: string, args: unknown[]): Promise<HostAnswer> {
    const m = DB_METHODS[method];
    if (m === undefined) return refused(notFound('Handler.UnknownHostCall', `ctx.db.${collection} has no method '${method}'`));
    if (m.write && o.surface === 'EdgeHandler') return refused(accessDenied('Handler.ReadOnlySurface', 'an EdgeHandler\'s ctx.db is read-only'));
    let part: ReturnType<DbMethod['build']>;
    try {
      part = m.build(args);
    } catch (err) {
      if (err instanceof ServiceError) return refused(err);
      throw err;
    }
    const run = (): Promise<Outcome> => dispatchNested(invocation({ operation: ENTITY_SPECS[m.kind], collection, ...part }), services, o.parent);
    const out = o.tx === undefined ? await run() : await o.tx.step(run, (r) => !r.ok, m.write);
    return answerOf(out);
  }

  async function platform(area: string, args: unknown[]): Promise<HostAnswer> {
    const build = PLATFORM_CALLS[area];
    const routes = o.parent.services.routes;
    if (o.surface !== 'ManagementHandler' || build === undefined || routes === undefined) return refused(notFound('Handler.UnknownHostCall', `ctx.platform.${area} does not exist`));
    const call = build(args);
    const hit = routes.resolve(call.method, call.segs);
    if (hit instanceof ServiceError) return refused(hit);
    const inv = invocation({ operation: hit.spec as OperationSpec, params: hit.params, body: call.body });
    // Platform operations keep their own transactions and storage: the invocation's transaction is not theirs.
    return answerOf(await dispatchNested(inv, o.parent.services, { actor: PLATFORM_ADMIN, scope: o.parent.scope }));
  }

  async function route(c: HostCall): Promise<HostAnswer> {
    const args = Array.isArray(c.args) ? c.args : [];
    const [head, ...rest] = c.target.split('.');
    if (head === 'db' && rest.length === 2) return db(rest[0]!, rest[1]!, args);
    if (head === 'platform' && rest.length === 2) return platform(rest.join('.'), args);
    const target = o.targets?.[c.target];
    if (target !== undefined) return target(c);
    return refused(notFound('Handler.UnknownHostCall', `no host call '${c.target}'`));
  }

  return {
    async call(c: HostCall): Promise<HostAnswer> {
      try {
        return await route(c);
      } catch (err) {
        // A savepoint statement that failed, or a call still running when the invocation ended (its transaction gone):
        // the sandbox gets a refusal, never a rejection; what it was is logged, not shown.
        if (err instanceof ServiceError) return refused(err);
        o.parent.services.log.warn('authored host call failed', { target: c.target, correlationId: base.correlationId, error: err instanceof Error ? err.message : String(err) });
        return refused(new ServiceError('INTERNAL', 'Handler.HostCallFailed', 'the host call failed'));
      }
    },
  };
}
