import type { HttpResponse } from 'uWebSockets.js';
import { maskError } from '../../runtime/errors/mask.js';
import type { Logger } from '../../runtime/log.js';
import { serviceRpcError, rpcError, type RpcId, type RpcResponse } from '../../runtime/mcp/jsonrpc.js';
import { stringifyWithin } from '../rest/bounded-json.js';
import { statusLine } from '../rest/status-text.js';
import { responseTooLarge } from '../rest/write.js';

/** One MCP HTTP response in progress. */
export interface McpReply {
  res: HttpResponse;
  aborted: boolean;
  /** Set once the status line is out. */
  started: boolean;
  correlationId: string;
  cors: string | null;
  /** The client accepts `text/event-stream` but not `application/json`: the answer is one SSE `message` event. */
  sse: boolean;
  maxResponseBytes: number;
  /** Close the connection after the answer (a declared body over the limit is not read; as REST). */
  closeConnection?: boolean;
  /** The publication that served the request (`X-Service-Publication-Version`, CONTRACT "Deployments"). */
  publicationVersion?: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes status, headers and body in one corked batch (uWS needs cork after an await). Nothing once the client is gone. */
export function send(r: McpReply, status: number, headers: Record<string, string>, body: string | null, contentType = JSON_TYPE): void {
  if (r.aborted) return;
  r.res.cork(() => {
    r.started = true;
    r.res.writeStatus(statusLine(status));
    r.res.writeHeader('X-Service-Correlation-Id', r.correlationId);
    if (r.publicationVersion !== undefined) r.res.writeHeader('X-Service-Publication-Version', String(r.publicationVersion));
    if (r.cors !== null) {
      r.res.writeHeader('Access-Control-Allow-Origin', r.cors);
      r.res.writeHeader('Access-Control-Expose-Headers', 'Mcp-Session-Id, X-Service-Correlation-Id, WWW-Authenticate');
    }
    for (const k in headers) r.res.writeHeader(k, headers[k]!);
    if (body === null) r.res.endWithoutBody(0, r.closeConnection === true);
    else {
      r.res.writeHeader('Content-Type', contentType);
      r.res.end(body, r.closeConnection === true);
    }
  });
}

/** A JSON-RPC response: JSON, or for a 200 one SSE event when that is all the client accepts. */
export function sendMessage(r: McpReply, status: number, message: RpcResponse, headers: Record<string, string> = {}): void {
  let text = stringifyWithin(message, r.maxResponseBytes);
  if (text === null) {
    // The answer does not fit: its error instead (a write has been applied; the message says so).
    text = JSON.stringify(rpcError(message.id, serviceRpcError(responseTooLarge(r.maxResponseBytes, 'POST'), r.correlationId)));
  }
  // A refusal with its own HTTP status (401, 404, 413) is plain JSON whatever the client accepts.
  if (!r.sse || status !== 200) return send(r, status, headers, text);
  send(r, status, { ...headers, 'Cache-Control': 'no-cache' }, `event: message\ndata: ${text}\n\n`, 'text/event-stream');
}

/** A JSON-RPC error of the transport (parse error, invalid request, unknown session) with an HTTP status. */
export function sendRpcError(r: McpReply, status: number, id: RpcId | null, code: number, message: string, data?: Record<string, unknown>): void {
  sendMessage(r, status, rpcError(id, data === undefined ? { code, message } : { code, message, data }));
}

/**
 * The last line of defence: an exception that escaped the MCP adapter is
 * logged and answered as a JSON-RPC internal error (never left to reach
 * uWS, which would stop the process); after the status line, the
 * connection is closed instead.
 */
export function failUnexpected(r: McpReply, err: unknown, log: Logger): void {
  const error = maskError(err, r.correlationId, log);
  try {
    if (r.aborted) return;
    if (r.started) {
      r.aborted = true;
      r.res.close();
      return;
    }
    sendMessage(r, 500, rpcError(null, serviceRpcError(error, r.correlationId)));
  } catch (again) {
    log.error('could not answer a failed MCP request', { correlationId: r.correlationId, error: String(again) });
  }
}
