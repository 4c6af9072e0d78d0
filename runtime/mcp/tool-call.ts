import { ENTITY_SPECS } from '../operations/entity/index.js';
import type { Result } from '../operations/types.js';
import { mcpToolBindingId } from '../publication/mcp-bindings.js';
import { grantView, partInvocation, publicationOf, serviceMeta, type McpRequestContext } from './context.js';
import { invalidParams, RpcFailure, serviceRpcError } from './jsonrpc.js';
import { pageOf } from './paging.js';
import { holdsScope, requireScope } from './scopes.js';
import { mcpStability, withNotice } from './stability.js';
import { checkArguments, entityArgsOf, toolsOf } from './tools.js';

/**
 * `tools/list`: the tools this caller can call, by its grants (its REST
 * twin's) and its MCP scopes; denied and Retired tools are absent, a
 * Deprecated one carries `_meta.service.deprecation`. Stable cursors
 * (paging.ts: a cursor names a tool, so a tool leaving the list between two
 * pages skips nothing).
 */
export async function listTools(rc: McpRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const granted = await grantView(rc);
  const stability = await mcpStability(rc);
  const visible = toolsOf(publicationOf(rc)).list.filter((t) => holdsScope(rc.ctx.actor, t.scope) && granted(t.operation.requiredGrants) && !stability.retired(mcpToolBindingId(t.operation.operationId)));
  const page = pageOf(visible, (t) => t.name, params.cursor);
  const tools = page.items.map((t) => withNotice(t.descriptor, stability.notice(mcpToolBindingId(t.operation.operationId))));
  return { tools, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }), _meta: serviceMeta(rc) };
}

/** The canonical REST body of a result; a delete's 204 becomes `{ data: { id, deleted: true }, meta }` (CONTRACT: MCP tools). */
function bodyOf(result: Result, id: string | undefined, correlationId: string): unknown {
  if (result.body !== undefined && result.status !== 204) return result.body;
  return { data: { id, deleted: true }, meta: { correlationId } };
}

/**
 * `tools/call`: the tool's entity operation dispatched with its arguments
 * as EntityArgs (REST's syntax), so grants, row policy, masks, quotas,
 * idempotency and the audit row are REST's. A denied or failed operation
 * is its canonical error as a JSON-RPC error (-32003 / -32000); an unknown
 * tool or a mistyped argument is -32602. A tool hidden from the caller's
 * list is still dispatched when called by name: the operation refuses it.
 */
export async function callTool(rc: McpRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (typeof params.name !== 'string') throw invalidParams('params.name must be a string');
  const tool = toolsOf(publicationOf(rc)).byName.get(params.name);
  if (tool === undefined) throw invalidParams(`unknown tool: ${params.name}`);
  const args = checkArguments(tool, params.arguments);
  requireScope(rc.ctx.actor, tool.scope);
  const id = typeof args.id === 'string' ? args.id : undefined;
  const correlationId = rc.ctx.inv.correlationId;
  const out = await rc.dispatch(partInvocation(rc, {
    operation: ENTITY_SPECS[tool.operation.kind],
    collection: tool.entity.collection,
    params: id === undefined ? {} : { id },
    args: entityArgsOf(args),
    body: args.input,
    idempotencyKey: typeof args.idempotencyKey === 'string' ? args.idempotencyKey : null,
    ifMatch: typeof args.ifMatch === 'string' ? args.ifMatch : null,
  }));
  if (!out.ok) {
    const e = serviceRpcError(out.error, correlationId);
    throw new RpcFailure(e.code, e.message, e.data);
  }
  const body = bodyOf(out.result, id, correlationId);
  const content = rc.session?.jsonContent === true ? [{ type: 'json', json: body }] : [{ type: 'text', text: JSON.stringify(body) }];
  const bindingId = mcpToolBindingId(tool.operation.operationId);
  return { content, structuredContent: body, isError: false, _meta: serviceMeta(rc, bindingId, (await mcpStability(rc)).notice(bindingId)) };
}
