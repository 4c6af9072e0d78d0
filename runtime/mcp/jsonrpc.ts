import { toErrorEnvelope } from '../errors/envelope.js';
import { MCP_CODE } from '../errors/codes.js';
import type { ServiceError } from '../errors/service-error.js';

/**
 * JSON-RPC 2.0 framing for MCP (CONTRACT: MCP): one message per POST, its
 * validation, and the error objects. Batches are refused (MCP 2025-06-18
 * removed them; docs/mcp.md).
 */

export type RpcId = string | number;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

export interface RpcError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown>;
}

export type RpcResponse = { jsonrpc: '2.0'; id: RpcId | null; result: Record<string, unknown> } | { jsonrpc: '2.0'; id: RpcId | null; error: RpcError };

/** What one POSTed body is. */
export type IncomingMessage =
  | { kind: 'request'; request: RpcRequest }
  | { kind: 'notification'; method: string }
  /** A client's answer to a server request (we send none): accepted and dropped. */
  | { kind: 'response' }
  | { kind: 'invalid'; id: RpcId | null; error: RpcError };

export const rpcResult = (id: RpcId | null, result: Record<string, unknown>): RpcResponse => ({ jsonrpc: '2.0', id, result });
export const rpcError = (id: RpcId | null, error: RpcError): RpcResponse => ({ jsonrpc: '2.0', id, error });

/** A JSON-RPC error of the protocol itself (not a canonical service error). */
export class RpcFailure extends Error {
  constructor(readonly code: number, message: string, readonly data?: Record<string, unknown>) {
    super(message);
  }

  toError(): RpcError {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidParams = (message: string): RpcFailure => new RpcFailure(INVALID_PARAMS, message);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const validId = (v: unknown): v is RpcId => (typeof v === 'string' && v.length <= 1024) || (typeof v === 'number' && Number.isFinite(v));

/** Classifies a decoded body (anything JSON.parse returned). */
export function classify(body: unknown): IncomingMessage {
  if (Array.isArray(body)) return { kind: 'invalid', id: null, error: { code: INVALID_REQUEST, message: 'JSON-RPC batches are not supported: send one message per request' } };
  if (!isObject(body)) return { kind: 'invalid', id: null, error: { code: INVALID_REQUEST, message: 'a JSON-RPC message must be an object' } };
  const id = validId(body.id) ? body.id : null;
  if (body.jsonrpc !== '2.0') return { kind: 'invalid', id, error: { code: INVALID_REQUEST, message: 'jsonrpc must be "2.0"' } };
  if (body.method === undefined && (Object.hasOwn(body, 'result') || Object.hasOwn(body, 'error')) && id !== null) return { kind: 'response' };
  if (typeof body.method !== 'string' || body.method === '' || body.method.length > 256) {
    return { kind: 'invalid', id, error: { code: INVALID_REQUEST, message: 'method must be a non-empty string' } };
  }
  if (body.params !== undefined && !isObject(body.params)) {
    // JSON-RPC allows by-position params; MCP names every parameter.
    const code = Array.isArray(body.params) ? INVALID_PARAMS : INVALID_REQUEST;
    return { kind: 'invalid', id, error: { code, message: 'params must be an object' } };
  }
  if (!Object.hasOwn(body, 'id')) return { kind: 'notification', method: body.method };
  if (id === null) return { kind: 'invalid', id: null, error: { code: INVALID_REQUEST, message: 'id must be a string or a number' } };
  return { kind: 'request', request: { id, method: body.method, params: (body.params as Record<string, unknown> | undefined) ?? {} } };
}

/**
 * A canonical service error as MCP's JSON-RPC error (CONTRACT: MCP errors):
 * -32003 for ACCESS_DENIED, -32000 for the others, with the envelope's
 * serviceCode, reasonCode and correlationId in `data`.
 */
export function serviceRpcError(err: ServiceError, correlationId: string): RpcError {
  const e = toErrorEnvelope(err, correlationId).error;
  const data: Record<string, unknown> = { serviceCode: e.code, reasonCode: e.reasonCode, correlationId };
  if (e.missingGrants !== undefined) data.missingGrants = e.missingGrants;
  if (e.field !== undefined) data.field = e.field;
  if (e.bindingId !== undefined) data.bindingId = e.bindingId;
  if (e.errors !== undefined) data.errors = e.errors;
  if (err.retryable) data.retryable = true;
  if (err.details.missingScopes !== undefined) data.missingScopes = err.details.missingScopes;
  data.explainUrl = e.explainUrl;
  return { code: MCP_CODE[err.code], message: err.message, data };
}
