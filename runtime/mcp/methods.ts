import { serviceMeta, type McpRequestContext } from './context.js';
import { invalidParams, METHOD_NOT_FOUND, RpcFailure, rpcError, rpcResult, type RpcRequest, type RpcResponse } from './jsonrpc.js';
import { complete, getPrompt, listPrompts, listResources, listResourceTemplates, readResource } from './schema-resources.js';
import { callTool, listTools } from './tool-call.js';

/** Protocol revisions this server speaks, newest first (MCP's date-form `protocolVersion`). */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

export const SERVER_INFO = { name: 'plinth', version: '0.1.0' } as const;

/** The experimental capability a client declares to get `{ type: "json" }` tool content (CONTRACT: MCP). */
export const JSON_CONTENT_CAPABILITY = 'service.jsonContent';

/** What an `initialize` settled, for the adapter to keep in the new session. */
export interface Initialized {
  protocolVersion: string;
  jsonContent: boolean;
}

/** One answered request: the JSON-RPC response, and for `initialize` what its session keeps. */
export interface McpAnswer {
  response: RpcResponse;
  initialized?: Initialized;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The client's version when supported, else the newest supported (MCP lifecycle: the client decides whether to go on). */
export const negotiateVersion = (asked: string): string =>
  (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : LATEST_PROTOCOL_VERSION;

function initialize(rc: McpRequestContext, params: Record<string, unknown>): { result: Record<string, unknown>; initialized: Initialized } {
  if (typeof params.protocolVersion !== 'string') throw invalidParams('params.protocolVersion must be a string');
  if (params.capabilities !== undefined && !isObject(params.capabilities)) throw invalidParams('params.capabilities must be an object');
  if (params.clientInfo !== undefined && !isObject(params.clientInfo)) throw invalidParams('params.clientInfo must be an object');
  const caps = (params.capabilities as Record<string, unknown> | undefined) ?? {};
  const experimental = caps.experimental;
  const jsonContent = isObject(experimental) && isObject(experimental[JSON_CONTENT_CAPABILITY]);
  const protocolVersion = negotiateVersion(params.protocolVersion);
  return {
    initialized: { protocolVersion, jsonContent },
    result: {
      protocolVersion,
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
      },
      serverInfo: { ...SERVER_INFO },
      instructions: 'Tools are the project\'s entity operations (<Entity>.list/get/create/update/delete) and its authored operations (<Entity>.<name>, operations.<name>); resources are entity schemas.',
      _meta: serviceMeta(rc),
    },
  };
}

type Handler = (rc: McpRequestContext, params: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>;

const HANDLERS: Readonly<Record<string, Handler>> = {
  // The SDK parses ping with a strict empty schema: `{ status: "ok" }` only for sessions that asked for the spec's shapes.
  ping: (rc) => (rc.session?.jsonContent === true ? { status: 'ok' } : {}),
  'tools/list': listTools,
  'tools/call': callTool,
  'resources/list': listResources,
  'resources/templates/list': (rc) => listResourceTemplates(rc),
  'resources/read': readResource,
  'prompts/list': (rc) => listPrompts(rc),
  'prompts/get': getPrompt,
  'completion/complete': complete,
};

/**
 * Answers one JSON-RPC request. Protocol errors (-32601, -32602, a refused
 * tool call) are answers; a ServiceError thrown here (a missing MCP scope)
 * is the `Mcp.Request` operation's own refusal, recorded as such and
 * answered by the adapter.
 */
export async function answerRequest(rc: McpRequestContext, req: RpcRequest): Promise<McpAnswer> {
  try {
    if (req.method === 'initialize') {
      const { result, initialized } = initialize(rc, req.params);
      return { response: rpcResult(req.id, result), initialized };
    }
    const handler = Object.hasOwn(HANDLERS, req.method) ? HANDLERS[req.method]! : undefined;
    if (handler === undefined) return { response: rpcError(req.id, { code: METHOD_NOT_FOUND, message: `method not found: ${req.method.slice(0, 100)}` }) };
    return { response: rpcResult(req.id, await handler(rc, req.params)) };
  } catch (err) {
    if (err instanceof RpcFailure) return { response: rpcError(req.id, err.toError()) };
    throw err;
  }
}
