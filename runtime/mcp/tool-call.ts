import type { ServiceError } from '../errors/service-error.js';
import { AUTHORED_OPERATION_SPEC } from '../operations/authored/spec.js';
import { ENTITY_SPECS } from '../operations/entity/index.js';
import type { Result } from '../operations/types.js';
import { mcpToolBindingId } from '../publication/mcp-bindings.js';
import { grantView, partInvocation, publicationOf, serviceMeta, type McpRequestContext } from './context.js';
import { invalidParams, RpcFailure, serviceRpcError } from './jsonrpc.js';
import { pageOf } from './paging.js';
import { operationCallOf, operationToolsOf, type OperationTool } from './operation-tools.js';
import { holdsScope, requireScope, type McpScope } from './scopes.js';
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
  const pub = publicationOf(rc);
  // Entity tools and authored operations' tools (operation-tools.ts) in one name order, for the cursors.
  const all: Listed[] = [
    ...toolsOf(pub).list.map((t) => ({ name: t.name, scope: t.scope, grants: t.operation.requiredGrants, bindingId: mcpToolBindingId(t.operation.operationId), descriptor: t.descriptor })),
    // A ManagementHandler runs only for the platform admin (CONTRACT "Handlers"): nobody else is shown its tool.
    ...[...operationToolsOf(pub).values()].filter((t) => t.op.handler.surface !== 'ManagementHandler' || rc.ctx.actor.kind === 'admin').map((t) => ({ name: t.name, scope: t.scope, grants: t.op.requiredGrants, bindingId: t.bindingId, descriptor: t.descriptor })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const visible = all.filter((t) => holdsScope(rc.ctx.actor, t.scope) && granted(t.grants) && !stability.retired(t.bindingId));
  const page = pageOf(visible, (t) => t.name, params.cursor);
  const tools = page.items.map((t) => withNotice(t.descriptor, stability.notice(t.bindingId)));
  return { tools, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }), _meta: serviceMeta(rc) };
}

/** A `tools/list` entry, entity tool or operation tool. */
interface Listed {
  name: string;
  scope: McpScope;
  grants: readonly string[];
  bindingId: string;
  descriptor: Record<string, unknown>;
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
  const opTool = operationToolsOf(publicationOf(rc)).get(params.name);
  if (opTool !== undefined) return callOperationTool(rc, opTool, params.arguments);
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
  if (!out.ok) throw refusal(out.error, correlationId);
  return answer(rc, bodyOf(out.result, id, correlationId), mcpToolBindingId(tool.operation.operationId));
}

/** A refused operation as its JSON-RPC error: ACCESS_DENIED -32003, every other code (BRIDGE_ERROR included) -32000 (CONTRACT: MCP errors). */
function refusal(error: ServiceError, correlationId: string): RpcFailure {
  const e = serviceRpcError(error, correlationId);
  return new RpcFailure(e.code, e.message, e.data);
}

/** A tool's result: the canonical REST body as structuredContent and as content (text, or json for sessions that asked). */
async function answer(rc: McpRequestContext, body: unknown, bindingId: string): Promise<Record<string, unknown>> {
  const content = rc.session?.jsonContent === true ? [{ type: 'json', json: body }] : [{ type: 'text', text: JSON.stringify(body) }];
  return { content, structuredContent: body, isError: false, _meta: serviceMeta(rc, bindingId, (await mcpStability(rc)).notice(bindingId)) };
}

/**
 * An authored operation's tool (CONTRACT "Operations"): dispatched through
 * AUTHORED_OPERATION_SPEC as its REST route is, so grants
 * (`operation:<name>:invoke`), input validation, limits and audit are
 * REST's; the result is REST's body `{ data: <return value> }`.
 */
async function callOperationTool(rc: McpRequestContext, tool: OperationTool, raw: unknown): Promise<Record<string, unknown>> {
  const { id, body } = operationCallOf(tool, raw);
  requireScope(rc.ctx.actor, tool.scope);
  const params: Record<string, string> = { operation: tool.op.name };
  if (id !== null) params.id = id;
  const out = await rc.dispatch(partInvocation(rc, { operation: AUTHORED_OPERATION_SPEC, collection: tool.op.collection, params, body, bindingId: tool.bindingId }));
  if (!out.ok) throw refusal(out.error, rc.ctx.inv.correlationId);
  return answer(rc, out.result.body, tool.bindingId);
}
