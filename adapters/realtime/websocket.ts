import { randomUUID } from 'node:crypto';
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { dispatch } from '../../runtime/dispatch.js';
import { toErrorEnvelope, httpStatusOf } from '../../runtime/errors/envelope.js';
import { maskError } from '../../runtime/errors/mask.js';
import { ServiceError, validationFailed } from '../../runtime/errors/service-error.js';
import type { Logger } from '../../runtime/log.js';
import { REALTIME_SPECS } from '../../runtime/operations/realtime/index.js';
import type { PreparedSubscription } from '../../runtime/realtime/hub.js';
import { realtimeTokenVerifier } from '../../runtime/realtime/subscription-token.js';
import type { Services } from '../../runtime/services.js';
import { RealtimeConnection, wsStats } from './connection.js';
import type { SlowConsumerSweep } from './slow-consumer-sweep.js';
import { socketInvocation, upgradeSocket, type SocketScope } from './upgrade.js';
import { GRANTS_CHANGED_CLOSE_CODE, grantsChangedError, ownerEndedError, projectConnections, SESSION_REVOKED_CLOSE_CODE, sessionConnections } from '../../runtime/realtime/session-connections.js';

/** Per-connection state: the socket's scope, its connection and the trackers that end it. */
interface ConnData extends SocketScope {
  conn: RealtimeConnection | null;
  untrack: (() => void) | null;
  untrackProject: (() => void) | null;
}

const MAX_MESSAGE_BYTES = 64 * 1024;
const HARD_CAP_MIN_BYTES = 16 * 1024 * 1024;

export interface RealtimeSocketOptions {
  /** Unsent bytes past which a client is closed with 1013 (REALTIME_MAX_BUFFERED_BYTES). */
  maxBufferedBytes: number;
  /** Checks published traffic against that bound; shared by every realtime route of the app. */
  sweep: SlowConsumerSweep;
}

/** `error` message: the REST error envelope's fields plus the subscription id and HTTP status. */
function errorMessage(err: ServiceError, correlationId: string, basePath: string, id: string | null): string {
  const e = toErrorEnvelope(err, correlationId, basePath).error;
  const quota = err.code === 'QUOTA_EXCEEDED' && err.details.headers !== undefined
    ? { quota: { kind: err.details.headers['X-Service-Quota-Kind'], limit: Number(err.details.headers['X-Service-Quota-Limit']), used: Number(err.details.headers['X-Service-Quota-Used']), reset: err.details.headers['X-Service-Quota-Reset'] } }
    : {};
  return JSON.stringify({ type: 'error', ...(id === null ? {} : { id }), status: httpStatusOf(err), ...e, ...quota });
}

/**
 * A throw inside a uWS WebSocket callback would reach uWS and stop the
 * process for every tenant: it is logged (masked, with a correlation id) and
 * the one connection is closed instead.
 */
function guard(ws: WebSocket<ConnData>, log: Logger, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    maskError(err, randomUUID(), log);
    try {
      ws.end(1011, 'internal error');
    } catch {
      /* already closed */
    }
  }
}

/**
 * `GET /api/realtime` (and `/v1/realtime`): WebSocket. The handshake is a
 * `Realtime.Connect` dispatch (401/403/429 answered as HTTP before any
 * upgrade); each `subscribe` is a `Realtime.Subscribe` dispatch with the
 * connection's credential, so grants and audit match REST.
 */
export function registerRealtimeWebSocket(app: TemplatedApp, services: Services, pattern: string, basePath: string, opts: RealtimeSocketOptions): void {
  const bound = opts.maxBufferedBytes;
  // Change messages go out through uWS topics: one publish per channel, copied natively to its members.
  services.realtime!.usePublisher({ publish: (topic, message) => void app.publish(topic, message, false, false) });
  // Realtime connections also accept the short-lived subscription token; REST routes never do.
  const rtServices: Services = { ...services, tokens: realtimeTokenVerifier(services.db, services.tokens) };
  app.ws<ConnData>(pattern, {
    maxPayloadLength: MAX_MESSAGE_BYTES,
    idleTimeout: 60,
    sendPingsAutomatically: true,
    // uWS's hard cap, far above our bound: the sweep closes a slow client (1013) long before uWS would
    // skip messages for it. Only a client that passes the cap within one sweep interval is cut off
    // without a close frame (1006), because uWS then drops the close frame too.
    maxBackpressure: Math.max(bound * 16, HARD_CAP_MIN_BYTES),
    // Credential: Authorization header, then a `bearer.<token>` protocol, then `access_token`; checked before upgrading.
    upgrade: (res, req, context) => upgradeSocket(res, req, context, services, rtServices, {
      basePath, protocol: 'rest', credentialOptional: false,
      chooseProtocol: (offered) => offered.find((p) => p.startsWith('bearer.')) ?? offered[0] ?? '',
    }, (scope): ConnData => ({ ...scope, conn: null, untrack: null, untrackProject: null })),
    open: (ws) => guard(ws, services.log, () => {
      wsStats.open++;
      const conn = new RealtimeConnection(ws, bound);
      const d = ws.getUserData();
      d.conn = conn;
      opts.sweep.add(conn);
      const owner = d.owner;
      d.untrack = sessionConnections.track(owner, () => {
        const revoked = ownerEndedError(owner!, 'connection');
        conn.endWith(SESSION_REVOKED_CLOSE_CODE, revoked.reasonCode === 'ApiKey.Revoked' ? 'api key deleted' : 'session revoked', errorMessage(revoked, randomUUID(), basePath, null));
      });
      // Subscriptions were authorized under the project's grants of their time: a grant change ends them (the admin holds no grants).
      if (owner !== null && d.projectId !== null) {
        d.untrackProject = projectConnections.track(d.projectId, () => {
          conn.endWith(GRANTS_CHANGED_CLOSE_CODE, 'grants changed', errorMessage(grantsChangedError('connection'), randomUUID(), basePath, null));
        });
      }
    }),
    message: (ws, message, isBinary) => guard(ws, services.log, () => {
      const d = ws.getUserData();
      const conn = d.conn!;
      const correlationId = randomUUID();
      const reply = (text: string): void => {
        if (conn.open) conn.send(text);
      };
      let msg: { type?: unknown; id?: unknown; entity?: unknown; filter?: unknown };
      try {
        if (isBinary) throw new Error('binary');
        msg = JSON.parse(Buffer.from(message).toString('utf8')) as typeof msg;
        if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) throw new Error('not an object');
      } catch {
        return reply(errorMessage(validationFailed('Request.MalformedJson', 'messages are JSON objects with a type', 'message'), correlationId, basePath, null));
      }
      if (msg.type === 'ping') return reply('{"type":"pong"}');
      if (msg.id !== undefined && (typeof msg.id !== 'string' || msg.id === '' || msg.id.length > 64)) {
        return reply(errorMessage(validationFailed('Realtime.InvalidSubscriptionId', 'id is a string of 1 to 64 characters', 'id'), correlationId, basePath, null));
      }
      if (msg.type === 'unsubscribe') {
        const id = msg.id as string | undefined;
        const detach = id === undefined ? undefined : conn.subscriptions.get(id);
        if (detach === undefined) return reply(errorMessage(new ServiceError('NOT_FOUND', 'Realtime.UnknownSubscription', 'no subscription with this id'), correlationId, basePath, id ?? null));
        detach();
        conn.subscriptions.delete(id!);
        return reply(JSON.stringify({ type: 'unsubscribed', id }));
      }
      if (msg.type !== 'subscribe') {
        return reply(errorMessage(validationFailed('Realtime.UnknownMessageType', "type is one of 'subscribe', 'unsubscribe', 'ping'", 'type'), correlationId, basePath, typeof msg.id === 'string' ? msg.id : null));
      }
      const id = (msg.id as string | undefined) ?? conn.newId();
      if (conn.subscriptions.has(id) || conn.pending.has(id)) {
        return reply(errorMessage(new ServiceError('CONFLICT', 'Realtime.DuplicateSubscriptionId', 'a subscription with this id is already open', { field: 'id' }), correlationId, basePath, id));
      }
      // Per-connection bound, counted with the subscribes still in flight so a burst cannot overshoot it.
      const full = services.realtime!.connectionFull(conn.subscriptions.size + conn.pending.size);
      if (full !== null) return reply(errorMessage(full, correlationId, basePath, id));
      conn.pending.add(id);
      void (async () => {
        const outcome = await dispatch(socketInvocation(REALTIME_SPECS.subscribe, d, { entity: msg.entity, filter: msg.filter }, correlationId), rtServices);
        if (!outcome.ok) {
          conn.pending.delete(id);
          return reply(errorMessage(outcome.error, correlationId, basePath, id));
        }
        const prepared = outcome.result.body as PreparedSubscription;
        let detach: () => void;
        try {
          detach = await services.realtime!.attach(prepared, id, conn);
        } catch {
          conn.pending.delete(id);
          return reply(errorMessage(new ServiceError('UNAVAILABLE', 'Realtime.FollowerUnavailable', 'the event log cannot be followed right now'), correlationId, basePath, id));
        }
        conn.pending.delete(id);
        if (!conn.open) return detach();
        conn.subscriptions.set(id, detach);
        reply(JSON.stringify({ type: 'subscribed', id, entity: prepared.entity }));
      })().catch((err: unknown) => {
        conn.pending.delete(id);
        const error = maskError(err, correlationId, services.log);
        try {
          reply(errorMessage(error, correlationId, basePath, id));
        } catch {
          /* the socket is gone */
        }
      });
    }),
    close: (ws) => {
      try {
        wsStats.open--;
        const d = ws.getUserData();
        d.untrack?.();
        d.untrackProject?.();
        const conn = d.conn;
        if (conn === null) return;
        opts.sweep.delete(conn);
        conn.closed();
      } catch (err) {
        maskError(err, randomUUID(), services.log);
      }
    },
  });
}

