import { randomUUID } from 'node:crypto';
import { GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { handleProtocols, makeServer, type Context } from 'graphql-ws';
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { dispatch } from '../../runtime/dispatch.js';
import { maskError } from '../../runtime/errors/mask.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { ChangeStream } from '../../runtime/graphql/change-stream.js';
import { graphqlErrorOf } from '../../runtime/graphql/execute.js';
import { GRAPHQL_REQUEST_SPEC } from '../../runtime/operations/graphql/request.js';
import { GRAPHQL_SUBSCRIBE_SPEC, type GraphQLSocketOperation } from '../../runtime/operations/graphql/subscribe.js';
import { realtimeTokenVerifier } from '../../runtime/realtime/subscription-token.js';
import { GRANTS_CHANGED_CLOSE_CODE, ownerEndedError, projectConnections, SESSION_REVOKED_CLOSE_CODE, sessionConnections } from '../../runtime/realtime/session-connections.js';
import type { Services } from '../../runtime/services.js';
import { bearerOf } from '../rest/request-meta.js';
import { RealtimeConnection, SLOW_CONSUMER_CLOSE_CODE, wsStats } from '../realtime/connection.js';
import { connectSocket, socketInvocation, upgradeSocket, type SocketScope } from '../realtime/upgrade.js';

/** A connection refused for its realtime quota, not its credential (graphql-ws clients treat 4429 as final). */
export const QUOTA_CLOSE_CODE = 4429;
/** graphql-ws's close code for a failure of ours (never a crash of the process). */
const INTERNAL_CLOSE_CODE = 4500;
/** Time a client has to send `connection_init` (graphql-ws's default); then 4408. */
const CONNECTION_INIT_WAIT_MS = 3_000;
const HARD_CAP_MIN_BYTES = 16 * 1024 * 1024;

/** One graphql-ws connection: its scope, its send path and what ends it. */
interface GraphQLSocket extends SocketScope {
  /** The subprotocol agreed at the upgrade (graphql-ws closes 4406 unless it is `graphql-transport-ws`). */
  protocol: string;
  conn: RealtimeConnection | null;
  /** graphql-ws's handlers for this socket (set on open). */
  handleMessage: ((data: string) => Promise<void>) | null;
  closed: ((code?: number, reason?: string) => Promise<void>) | null;
  /** Attached subscriptions: ended on close even if graphql-ws never took them. */
  streams: Set<ChangeStream>;
  /** Subscribes being authorized (counted against the per-connection bound with `streams`). */
  pending: number;
  untrack: (() => void) | null;
  untrackProject: (() => void) | null;
  /** Queries and mutations running, by operation id: a client `complete` or the socket's close aborts them. */
  running: Map<string, AbortController>;
}

/** What an accepted `subscribe` message carries to execution (graphql-ws's contextValue). */
type SocketOperation =
  | { kind: 'operation'; socket: GraphQLSocket; payload: unknown; correlationId: string; id: string; abort: AbortController }
  | { kind: 'subscription'; stream: ChangeStream };

interface Extra {
  socket: GraphQLSocket;
}

type ConnectionParams = Record<string, unknown> | undefined;

export interface GraphQLSocketOptions {
  /** Unsent bytes past which a client is closed with 1013 (REALTIME_MAX_BUFFERED_BYTES), as on `/api/realtime`. */
  maxBufferedBytes: number;
  /** Largest message: the REST body limit, so a document too big for POST is too big here (uWS closes with 1009). */
  maxMessageBytes: number;
}

const stringParam = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Errors as GraphQL serializes them (a dispatched request's are already plain objects). */
const formatErrors = (errors: readonly unknown[]): unknown[] => errors.map((e) => (e instanceof GraphQLError ? e.toJSON() : e));

/** graphql-transport-ws when offered; otherwise the first offered, which graphql-ws then closes with 4406 (a clear answer, not a failed handshake). */
const subprotocolOf = (offered: readonly string[]): string => handleProtocols(offered as string[]) || (offered[0] ?? '');

const unavailable = (): ServiceError => new ServiceError('UNAVAILABLE', 'Realtime.FollowerUnavailable', 'the event log cannot be followed right now');

/**
 * GraphQL subscriptions over graphql-ws (`graphql-transport-ws`) on the
 * `/graphql` path (CONTRACT: GraphQL subscriptions): graphql-ws's own
 * server logic (`makeServer`) bound to uWS. A credential in the upgrade
 * headers is checked before upgrading (HTTP 401); otherwise it comes in
 * `connection_init` (`{ authorization, "x-service-tenant", "x-service-project" }`)
 * and a bad one closes with 4403. Each `subscribe` message is a
 * `GraphQL.Subscribe` dispatch; changes come from the realtime hub, under its
 * quota and slow-consumer bound (1013). Queries and mutations sent on the
 * socket run as `POST /graphql` would.
 */
export function registerGraphQLWebSocket(app: TemplatedApp, services: Services, pattern: string, basePath: string, opts: GraphQLSocketOptions): void {
  const hub = services.realtime!;
  const rtServices: Services = { ...services, tokens: realtimeTokenVerifier(services.db, services.tokens) };
  const refuse = (err: ServiceError, correlationId: string): GraphQLError[] => [graphqlErrorOf(err, correlationId)];

  /** Ends the connection when its session is revoked (4401) or its project's grants change (4403). */
  const track = (s: GraphQLSocket): void => {
    const conn = s.conn!;
    const owner = s.owner;
    s.untrack?.();
    s.untrackProject?.();
    s.untrack = sessionConnections.track(owner, () => {
      const revoked = ownerEndedError(owner!, 'connection');
      conn.endWith(SESSION_REVOKED_CLOSE_CODE, revoked.reasonCode === 'ApiKey.Revoked' ? 'api key deleted' : 'session revoked');
    });
    if (owner !== null && s.projectId !== null) s.untrackProject = projectConnections.track(s.projectId, () => conn.endWith(GRANTS_CHANGED_CLOSE_CODE, 'grants changed'));
  };

  const server = makeServer<ConnectionParams, Extra>({
    connectionInitWaitTimeout: CONNECTION_INIT_WAIT_MS,
    onConnect: async (ctx: Context<ConnectionParams, Extra>) => {
      const s = ctx.extra.socket;
      const p = ctx.connectionParams ?? {};
      const authorization = stringParam(p.authorization) ?? stringParam(p.Authorization);
      const given = { tenant: stringParam(p['x-service-tenant']), project: stringParam(p['x-service-project']), branch: stringParam(p['x-service-branch']) };
      // connection_init's credential and scope override the upgrade's; either way they are checked again.
      if (authorization !== undefined || given.tenant !== undefined || given.project !== undefined || given.branch !== undefined) {
        if (authorization !== undefined) s.bearer = bearerOf(authorization) ?? '';
        if (given.tenant !== undefined) s.tenant = given.tenant;
        if (given.project !== undefined) s.project = given.project;
        if (given.branch !== undefined) s.branch = given.branch;
        s.connected = false;
      }
      if (!s.connected) {
        const err = await connectSocket(s, services, rtServices, randomUUID(), 'graphql');
        if (err !== null) {
          // A valid credential over its realtime quota is not forbidden: it may come back later.
          if (err.code === 'QUOTA_EXCEEDED') s.conn!.endWith(QUOTA_CLOSE_CODE, 'realtime quota exceeded');
          return false; // graphql-ws closes with 4403
        }
      }
      track(s);
      return true;
    },
    onSubscribe: async (ctx, id, payload) => {
      const s = ctx.extra.socket;
      const correlationId = randomUUID();
      const full = hub.connectionFull(s.streams.size + s.pending);
      if (full !== null) return refuse(full, correlationId);
      s.pending++;
      try {
        const outcome = await dispatch(socketInvocation(GRAPHQL_SUBSCRIBE_SPEC, s, payload, correlationId, 'graphql'), rtServices);
        if (!outcome.ok) return refuse(outcome.error, correlationId);
        const op = outcome.result.body as GraphQLSocketOperation;
        if (op.kind === 'errors') return op.errors;
        const args = { schema: op.schema, document: op.document, operationName: payload.operationName ?? null, variableValues: payload.variables ?? {} };
        if (op.kind === 'operation') {
          return { ...args, contextValue: { kind: 'operation', socket: s, payload, correlationId, id, abort: new AbortController() } satisfies SocketOperation };
        }
        return await attach(s, id, op, correlationId, args);
      } finally {
        s.pending--;
      }
    },
    subscribe: (args: ExecutionArgs) => (args.contextValue as Extract<SocketOperation, { kind: 'subscription' }>).stream,
    // A query or mutation on the socket is the same GraphQL.Request as `POST /graphql`, with the connection's credential.
    execute: async (args: ExecutionArgs): Promise<ExecutionResult> => {
      const c = args.contextValue as Extract<SocketOperation, { kind: 'operation' }>;
      // Its statements stop when the client completes it or the socket closes (docs/graphql.md "Time per request").
      c.socket.running.set(c.id, c.abort);
      try {
        const outcome = await dispatch({ ...socketInvocation(GRAPHQL_REQUEST_SPEC, c.socket, c.payload, c.correlationId, 'graphql'), signal: c.abort.signal }, rtServices);
        if (!outcome.ok) return { errors: refuse(outcome.error, c.correlationId) };
        return outcome.result.body as ExecutionResult;
      } finally {
        c.socket.running.delete(c.id);
      }
    },
    onNext: (_ctx, _id, _payload, _args, result) => (result.errors === undefined ? result : { ...result, errors: formatErrors(result.errors) }) as never,
  });

  /**
   * Attaches an authorized subscription to the hub now, so a failure to
   * follow the event log is still an `error` message; changes queue in its
   * stream until graphql-ws takes it.
   */
  async function attach(s: GraphQLSocket, id: string, op: Extract<GraphQLSocketOperation, { kind: 'subscription' }>, correlationId: string, args: Omit<ExecutionArgs, 'contextValue'>) {
    const conn = s.conn!;
    const stream = new ChangeStream(op.render, () => conn.endWith(SLOW_CONSUMER_CLOSE_CODE, 'slow consumer: too many unsent messages'));
    let detach: () => void;
    try {
      detach = await hub.attach(op.prepared, id, stream);
    } catch (err) {
      maskError(err, correlationId, services.log);
      return refuse(unavailable(), correlationId);
    }
    stream.detach = () => {
      s.streams.delete(stream);
      detach();
    };
    if (!conn.open) {
      await stream.return();
      return [];
    }
    s.streams.add(stream);
    return { ...args, contextValue: { kind: 'subscription', stream } satisfies SocketOperation };
  }

  const bound = opts.maxBufferedBytes;
  app.ws<GraphQLSocket>(pattern, {
    maxPayloadLength: opts.maxMessageBytes,
    idleTimeout: 60,
    sendPingsAutomatically: true,
    maxBackpressure: Math.max(bound * 16, HARD_CAP_MIN_BYTES),
    upgrade: (res, req, context) => upgradeSocket(res, req, context, services, rtServices, {
      basePath, protocol: 'graphql', credentialOptional: true,
      chooseProtocol: subprotocolOf,
    }, (scope, protocol): GraphQLSocket => ({
      ...scope, protocol,
      conn: null, handleMessage: null, closed: null, streams: new Set(), pending: 0, untrack: null, untrackProject: null, running: new Map(),
    })),
    open: (ws: WebSocket<GraphQLSocket>) => guard(ws, services, () => {
      wsStats.open++;
      const s = ws.getUserData();
      const conn = new RealtimeConnection(ws, bound);
      s.conn = conn;
      s.closed = server.opened({
        protocol: s.protocol,
        send: (message) => conn.send(message),
        // Deferred: graphql-ws may close from inside `opened` (wrong subprotocol), before uWS finished opening.
        close: (code, reason) => void setImmediate(() => conn.endWith(code ?? 1000, reason ?? '')),
        onMessage: (cb) => {
          s.handleMessage = cb;
        },
      }, { socket: s });
      if (s.connected) track(s);
    }),
    message: (ws: WebSocket<GraphQLSocket>, message: ArrayBuffer) => guard(ws, services, () => {
      const s = ws.getUserData();
      const handle = s.handleMessage;
      if (handle === null) return;
      const text = Buffer.from(message).toString('utf8');
      if (s.running.size > 0) abortCompleted(s, text);
      // graphql-ws answers a malformed or out-of-order message with its own close code (4400, 4401, 4409, 4429).
      handle(text).catch((err: unknown) => {
        maskError(err, randomUUID(), services.log);
        s.conn?.endWith(INTERNAL_CLOSE_CODE, 'internal error');
      });
    }),
    close: (ws: WebSocket<GraphQLSocket>, code: number, message: ArrayBuffer) => {
      try {
        wsStats.open--;
        const s = ws.getUserData();
        s.untrack?.();
        s.untrackProject?.();
        s.conn?.closed();
        for (const stream of [...s.streams]) void stream.return();
        for (const running of s.running.values()) running.abort();
        s.closed?.(code, Buffer.from(message).toString('utf8')).catch((err: unknown) => maskError(err, randomUUID(), services.log));
      } catch (err) {
        maskError(err, randomUUID(), services.log);
      }
    },
  });
}

/** Longest `complete` message looked at: `{"id":"…","type":"complete"}` with a generous id. */
const MAX_COMPLETE_BYTES = 512;

/**
 * A client's `complete` for a query or mutation still running aborts it.
 * graphql-ws only forgets such an operation (its result is dropped when it
 * comes), with no hook, so the message is read here first; only short
 * messages while something runs are parsed, graphql-ws still judges them.
 */
function abortCompleted(s: GraphQLSocket, text: string): void {
  if (text.length > MAX_COMPLETE_BYTES || !text.includes('complete')) return;
  try {
    const m = JSON.parse(text) as { type?: unknown; id?: unknown };
    if (m.type === 'complete' && typeof m.id === 'string') s.running.get(m.id)?.abort();
  } catch {
    /* graphql-ws closes with 4400 */
  }
}

/** A throw inside a uWS callback would stop the process for every tenant: the one connection is closed instead. */
function guard(ws: WebSocket<GraphQLSocket>, services: Services, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    maskError(err, randomUUID(), services.log);
    try {
      ws.end(INTERNAL_CLOSE_CODE, 'internal error');
    } catch {
      /* already closed */
    }
  }
}
