import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { dispatch } from '../../runtime/dispatch.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { McpSessionState } from '../../runtime/mcp/context.js';
import { classify, INVALID_REQUEST, PARSE_ERROR, rpcError, serviceRpcError, type RpcId } from '../../runtime/mcp/jsonrpc.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type McpAnswer } from '../../runtime/mcp/methods.js';
import { MCP_REQUEST_SPEC, type McpCall } from '../../runtime/operations/mcp/request.js';
import type { Invocation } from '../../runtime/operations/types.js';
import type { Services } from '../../runtime/services.js';
import { decodeJsonBody } from '../rest/body.js';
import { framingProblem } from '../rest/framing.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readBody, type InFlight, type RestOptions } from '../rest/handler.js';
import { bearerOf, readMeta, type RequestMeta } from '../rest/request-meta.js';
import { failUnexpected, send, sendMessage, sendRpcError, type McpReply } from './reply.js';
import { McpSessions } from './sessions.js';
import { endpointUrl, METADATA_SUFFIX, protectedResourceMetadata, wwwAuthenticate } from './well-known.js';

/** JSON-RPC error code of an unknown or expired session (the SDK's own server uses it with HTTP 404). */
const SESSION_NOT_FOUND = -32001;

/** What is copied out of the uWS request before any await. */
interface McpHead {
  meta: RequestMeta;
  tenant: string;
  project: string;
  host: string;
  sessionId: string;
  protocolVersion: string;
}

const decodeSlug = (raw: string): string | null => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
};

/** `text/event-stream` only when the client does not take JSON (the SDK takes both, and gets JSON). */
const wantsSse = (accept: string): boolean => accept.includes('text/event-stream') && !accept.includes('application/json') && !accept.includes('*/*');

/**
 * MCP's Streamable HTTP transport on `/mcp/{tenantSlug}/{projectSlug}`
 * (CONTRACT: MCP; docs/mcp.md): POST carries one JSON-RPC message and gets
 * its response as JSON (or one SSE event), a notification or response 202;
 * `initialize` opens a session (`Mcp-Session-Id`), DELETE ends it, GET
 * (server-initiated stream) is 405. Each request is one `Mcp.Request`
 * dispatch with the route's slugs as tenant and project: the bearer is
 * checked every time. The protected-resource metadata is public.
 */
export function registerMcpEndpoint(app: TemplatedApp, services: Services, opts: RestOptions, inFlight: InFlight): void {
  // Every node of a cluster shares the admin credential, so every node derives the same session key.
  const sessions = new McpSessions(services.adminTokenDigest);
  const maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  const guarded = (handler: (res: HttpResponse, reply: McpReply, head: McpHead) => void) => (res: HttpResponse, req: HttpRequest): void => {
    let reply: McpReply | null = null;
    try {
      if (framingProblem(req) !== null) {
        res.close(); // as REST (adapters/rest/framing.ts)
        return;
      }
      const meta = readMeta(req);
      const accept = req.getHeader('accept');
      const head: McpHead = {
        meta, tenant: decodeSlug(req.getParameter(0) ?? '') ?? '', project: decodeSlug(req.getParameter(1) ?? '') ?? '',
        host: req.getHeader('host'), sessionId: req.getHeader('mcp-session-id'), protocolVersion: req.getHeader('mcp-protocol-version'),
      };
      const r: McpReply = { res, aborted: false, started: false, correlationId: meta.correlationId, cors: opts.corsOrigin, sse: wantsSse(accept), maxResponseBytes };
      reply = r;
      res.onAborted(() => {
        r.aborted = true;
      });
      handler(res, r, head);
    } catch (err) {
      // Thrown synchronously inside a uWS callback: it must not reach uWS.
      if (reply !== null) failUnexpected(reply, err, services.log);
      else res.close();
    }
  };

  /** Runs one `Mcp.Request` dispatch for the route, the request's in-flight slot held meanwhile. */
  const run = (r: McpReply, head: McpHead, call: McpCall, then: (answer: McpAnswer | null) => void, id: RpcId | null): void => {
    inFlight.count++;
    dispatch(invocationOf(head, call, r), services)
      .then((outcome) => {
        if (outcome.publicationVersion !== undefined) r.publicationVersion = outcome.publicationVersion;
        if (outcome.ok) return then(outcome.result.body as McpAnswer | null);
        const error = outcome.error;
        if (error.code === 'UNAUTHORIZED') {
          const endpoint = endpointUrl(head.host, head.tenant, head.project);
          return sendMessage(r, 401, rpcError(id, serviceRpcError(error, r.correlationId)), { 'WWW-Authenticate': wwwAuthenticate(endpoint) });
        }
        sendMessage(r, 200, rpcError(id, serviceRpcError(error, r.correlationId)));
      })
      .catch((err: unknown) => failUnexpected(r, err, services.log))
      .finally(() => inFlight.count--);
  };

  const invocationOf = (head: McpHead, call: McpCall, r: McpReply): Invocation => ({
    correlationId: head.meta.correlationId, protocol: 'mcp', operation: MCP_REQUEST_SPEC, collection: null, relation: null, params: {}, query: new Map(),
    body: call, bearer: bearerOf(head.meta.authorization), tenantHeader: head.tenant, projectHeader: head.project,
    branchHeader: head.meta.branch === '' ? null : head.meta.branch, idempotencyKey: null, ifMatch: null, basePath: '/api',
    clientAddress: r.aborted ? null : Buffer.from(r.res.getRemoteAddressAsText()).toString(),
  });

  const endpointKey = (head: McpHead): string => JSON.stringify([head.tenant, head.project]);

  /** The session a request names: null without the header (stateless use), 'unknown' when it names none of this endpoint's. */
  const sessionOf = (head: McpHead): McpSessionState | null | 'unknown' => {
    if (head.sessionId === '') return null;
    return sessions.get(head.sessionId, endpointKey(head)) ?? 'unknown';
  };

  const post = guarded((res, r, head) => {
    const declared = Number(head.meta.contentLength);
    if (head.meta.contentLength !== '' && (!Number.isFinite(declared) || declared > opts.maxBodyBytes)) {
      r.closeConnection = true;
      return tooLarge(r);
    }
    inFlight.count++;
    let reading = true;
    res.onAborted(() => {
      r.aborted = true;
      if (reading) inFlight.count--;
      reading = false;
    });
    readBody(res, opts.maxBodyBytes, (bytes) => {
      if (!reading) return;
      reading = false;
      inFlight.count--;
      if (bytes === null) return tooLarge(r);
      try {
        onMessage(r, head, bytes);
      } catch (err) {
        failUnexpected(r, err, services.log);
      }
    }, (err) => {
      if (reading) inFlight.count--;
      reading = false;
      failUnexpected(r, err, services.log);
    });
  });

  const tooLarge = (r: McpReply): void =>
    sendRpcError(r, 413, null, INVALID_REQUEST, `request body larger than ${opts.maxBodyBytes} bytes`, { serviceCode: 'PAYLOAD_TOO_LARGE', reasonCode: 'Request.BodyTooLarge', correlationId: r.correlationId });

  const onMessage = (r: McpReply, head: McpHead, bytes: Buffer): void => {
    let body: unknown;
    try {
      body = decodeJsonBody(bytes, head.meta.contentType);
    } catch (err) {
      const e = err as ServiceError;
      const data = { serviceCode: e.code, reasonCode: e.reasonCode, correlationId: r.correlationId };
      if (e.code === 'UNSUPPORTED_MEDIA_TYPE') return sendRpcError(r, 415, null, INVALID_REQUEST, 'Content-Type must be application/json', data);
      return sendRpcError(r, 400, null, PARSE_ERROR, `parse error: ${e.message}`, data);
    }
    const msg = classify(body);
    if (msg.kind === 'invalid') return sendMessage(r, 400, rpcError(msg.id, msg.error));
    const isInit = msg.kind === 'request' && msg.request.method === 'initialize';
    const id = msg.kind === 'request' ? msg.request.id : null;
    if (!isInit && head.protocolVersion !== '' && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(head.protocolVersion)) {
      return sendRpcError(r, 400, id, INVALID_REQUEST, `unsupported MCP-Protocol-Version: ${head.protocolVersion.slice(0, 40)}`);
    }
    const session = isInit ? null : sessionOf(head);
    // The credential first: an unknown session with a bad bearer is 401, not 404.
    if (session === 'unknown') return run(r, head, { request: null, session: null }, () => sessionNotFound(r, id), id);
    if (msg.kind !== 'request') {
      // Notifications and responses are accepted once the bearer is good: 202, no body.
      return run(r, head, { request: null, session }, () => send(r, 202, {}, null), null);
    }
    run(r, head, { request: msg.request, session }, (answer) => {
      if (answer === null) return send(r, 202, {}, null);
      const headers: Record<string, string> = {};
      if (answer.initialized !== undefined && !('error' in answer.response)) {
        headers['Mcp-Session-Id'] = sessions.create(endpointKey(head), answer.initialized.protocolVersion, answer.initialized.jsonContent).id;
      }
      sendMessage(r, 200, answer.response, headers);
    }, id);
  };

  const sessionNotFound = (r: McpReply, id: RpcId | null): void => sendRpcError(r, 404, id, SESSION_NOT_FOUND, 'session not found: initialize again');

  const del = guarded((_res, r, head) => {
    if (head.sessionId === '') return sendRpcError(r, 400, null, INVALID_REQUEST, 'Mcp-Session-Id header is required');
    const session = sessionOf(head);
    run(r, head, { request: null, session: null }, () => {
      if (session === null || session === 'unknown') return sessionNotFound(r, null);
      sessions.end(session.id);
      send(r, 200, {}, null);
    }, null);
  });

  const notAllowed = guarded((_res, r) => send(r, 405, { Allow: 'POST, DELETE' }, null));

  const metadata = guarded((_res, r, head) => {
    send(r, 200, { 'Cache-Control': 'public, max-age=300' }, JSON.stringify(protectedResourceMetadata(head.host, head.tenant, head.project)));
  });

  const preflight = guarded((_res, r) => {
    if (r.cors === null) return send(r, 405, { Allow: 'POST, DELETE' }, null);
    send(r, 204, {
      'Access-Control-Allow-Methods': 'POST, DELETE, OPTIONS',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, X-Service-Branch, X-Service-Correlation-Id, Last-Event-ID',
      'Access-Control-Max-Age': '600',
    }, null);
  });

  for (const pattern of ['/mcp/:tenant/:project', '/mcp/:tenant/:project/']) {
    app.post(pattern, post);
    app.del(pattern, del);
    app.get(pattern, notAllowed);
    app.options(pattern, preflight);
    app.any(pattern, notAllowed);
  }
  app.get(`/mcp/:tenant/:project${METADATA_SUFFIX}`, metadata);
  // RFC 9728's own form: the well-known segment before the resource's path.
  app.get(`${METADATA_SUFFIX}/mcp/:tenant/:project`, metadata);
}
