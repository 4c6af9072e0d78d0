import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js';
import { dispatch } from '../../runtime/dispatch.js';
import { httpStatusOf, toErrorEnvelope } from '../../runtime/errors/envelope.js';
import { maskError } from '../../runtime/errors/mask.js';
import { unauthorized, type ServiceError } from '../../runtime/errors/service-error.js';
import type { Logger } from '../../runtime/log.js';
import { REALTIME_SPECS } from '../../runtime/operations/realtime/index.js';
import type { Invocation, OperationSpec, Protocol } from '../../runtime/operations/types.js';
import { isSubscriptionToken, verifySubscriptionToken } from '../../runtime/realtime/subscription-token.js';
import type { Services } from '../../runtime/services.js';
import { bearerOf, parseQuery } from '../rest/request-meta.js';
import { statusLine } from '../rest/status-text.js';

/** Who a socket acts as: the credential and scope every operation on it dispatches with. */
export interface SocketScope {
  bearer: string;
  tenant: string;
  project: string;
  branch: string | null;
  basePath: string;
  /** Set once `Realtime.Connect` accepted the credential (at the upgrade, or for graphql-ws at `connection_init`). */
  connected: boolean;
  /** The session or API key behind the credential (connectionOwner; null for the admin): its revocation or deletion closes the connection. */
  owner: string | null;
  /** The resolved project id; a grant change there ends the connection of a non-admin caller. */
  projectId: string | null;
}

const CORRELATION = /^[A-Za-z0-9._:-]{8,128}$/;

/** An operation dispatched for a socket: the socket's credential and scope, as a request's headers would carry them. */
export const socketInvocation = (spec: OperationSpec, d: SocketScope, body: unknown, correlationId: string, protocol: Protocol = 'rest'): Invocation => ({
  correlationId, protocol, operation: spec, collection: null, relation: null, params: {}, query: new Map(), body,
  bearer: d.bearer === '' ? null : d.bearer, tenantHeader: d.tenant === '' ? null : d.tenant, projectHeader: d.project === '' ? null : d.project,
  branchHeader: d.branch, idempotencyKey: null, ifMatch: null, basePath: d.basePath,
});

/**
 * `Realtime.Connect` for a socket's credential: on success the socket's
 * owner and project are recorded. A subscription token (`rt_…`) is bound to
 * its project, so the scope comes from it, never from the request.
 */
export async function connectSocket(d: SocketScope, services: Services, rtServices: Services, correlationId: string, protocol: Protocol): Promise<ServiceError | null> {
  if (isSubscriptionToken(d.bearer)) {
    const v = await verifySubscriptionToken(services.db, d.bearer);
    if (v === null) return unauthorized('Auth.InvalidToken', 'the subscription token is invalid or expired');
    d.tenant = v.tenantId;
    d.project = v.projectId;
  }
  const outcome = await dispatch(socketInvocation(REALTIME_SPECS.connect, d, undefined, correlationId, protocol), rtServices);
  if (!outcome.ok) return outcome.error;
  const body = outcome.result.body as { owner?: string | null; projectId?: string };
  d.owner = body.owner ?? null;
  d.projectId = body.projectId ?? null;
  d.connected = true;
  return null;
}

export interface UpgradeOptions {
  basePath: string;
  protocol: Protocol;
  /** The subprotocol answered, from those offered ('' for none). */
  chooseProtocol(offered: readonly string[]): string;
  /** Upgrade without a credential (graphql-ws authenticates in `connection_init`); a credential that is given is still checked now. */
  credentialOptional: boolean;
}

/**
 * A WebSocket upgrade: the credential from the Authorization header, a
 * `bearer.<token>` subprotocol or `access_token`, and the scope from the
 * REST headers or the query string. A credential is checked with
 * `Realtime.Connect` before upgrading, so 401/403/429 are answered as HTTP.
 */
export function upgradeSocket<T extends SocketScope>(
  res: HttpResponse, req: HttpRequest, context: us_socket_context_t,
  services: Services, rtServices: Services, opts: UpgradeOptions, dataOf: (scope: SocketScope, subprotocol: string) => T,
): void {
  guardUpgrade(res, services.log, () => {
    const q = parseQuery(req.getQuery() ?? '');
    const key = req.getHeader('sec-websocket-key');
    const ext = req.getHeader('sec-websocket-extensions');
    const offered = req.getHeader('sec-websocket-protocol');
    const incoming = req.getHeader('x-service-correlation-id');
    const correlationId = CORRELATION.test(incoming) ? incoming : randomUUID();
    const protocols = offered === '' ? [] : offered.split(',').map((s) => s.trim());
    const viaProtocol = protocols.find((p) => p.startsWith('bearer.'));
    const bearer = bearerOf(req.getHeader('authorization')) ?? viaProtocol?.slice('bearer.'.length) ?? q.get('access_token') ?? '';
    const chosen = opts.chooseProtocol(protocols);
    const data = dataOf({
      bearer,
      tenant: req.getHeader('x-service-tenant') || (q.get('tenant') ?? ''),
      project: req.getHeader('x-service-project') || (q.get('project') ?? ''),
      branch: req.getHeader('x-service-branch') || (q.get('branch') ?? null),
      basePath: opts.basePath, connected: false, owner: null, projectId: null,
    }, chosen);
    const state = { aborted: false, answered: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    void (async () => {
      const err = bearer === '' && opts.credentialOptional ? null : await connectSocket(data, services, rtServices, correlationId, opts.protocol);
      if (state.aborted) return;
      res.cork(() => {
        state.answered = true;
        if (err !== null) {
          res.writeStatus(statusLine(httpStatusOf(err)));
          res.writeHeader('X-Service-Correlation-Id', correlationId);
          const h = err.details.headers;
          if (h !== undefined) for (const k in h) res.writeHeader(k, h[k]!);
          res.writeHeader('Content-Type', 'application/json; charset=utf-8');
          res.end(JSON.stringify(toErrorEnvelope(err, correlationId, opts.basePath)), true);
          return;
        }
        res.upgrade(data, key, chosen, ext, context);
      });
    })().catch((err: unknown) => failUpgrade(res, state, correlationId, err, services.log));
    return { state, correlationId };
  });
}

/** The upgrade handler's guard: a synchronous throw answers 500 INTERNAL as REST would. */
function guardUpgrade(res: HttpResponse, log: Logger, fn: () => { state: { aborted: boolean; answered: boolean }; correlationId: string }): void {
  let started: { state: { aborted: boolean; answered: boolean }; correlationId: string } | null = null;
  try {
    started = fn();
  } catch (err) {
    failUpgrade(res, started?.state ?? { aborted: false, answered: false }, started?.correlationId ?? randomUUID(), err, log);
  }
}

function failUpgrade(res: HttpResponse, state: { aborted: boolean; answered: boolean }, correlationId: string, err: unknown, log: Logger): void {
  const error = maskError(err, correlationId, log);
  try {
    if (state.aborted) return;
    if (state.answered) {
      res.close();
      return;
    }
    state.answered = true;
    res.cork(() => {
      res.writeStatus(statusLine(httpStatusOf(error)));
      res.writeHeader('X-Service-Correlation-Id', correlationId);
      res.writeHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(JSON.stringify(toErrorEnvelope(error, correlationId, '/api')), true);
    });
  } catch (again) {
    log.error('could not answer a failed upgrade', { correlationId, error: String(again) });
  }
}
