import { dispatch } from '../../dispatch.js';
import type { McpSessionState } from '../../mcp/context.js';
import type { RpcRequest } from '../../mcp/jsonrpc.js';
import { answerRequest } from '../../mcp/methods.js';
import { noGrants, type OperationSpec } from '../types.js';

/** What the MCP adapter dispatches for one JSON-RPC request (`request: null`: only authenticate and scope, for DELETE). */
export interface McpCall {
  request: RpcRequest | null;
  session: McpSessionState | null;
}

/**
 * `POST /mcp/{tenantSlug}/{projectSlug}` (CONTRACT: MCP). This operation
 * authenticates the bearer (on every request, initialize included), resolves
 * the route's tenant and project and pins the publication; it grants
 * nothing by itself. A tool call or schema read is then dispatched as its
 * own operation with `protocol: 'mcp'` (its REST twin for tools), so
 * authority, policy, quotas and the audit row are REST's. Its body is the
 * `McpAnswer` (runtime/mcp/methods.ts).
 */
export const MCP_REQUEST_SPEC: OperationSpec = {
  id: 'Mcp.Request', authn: 'user', scope: 'project', grants: noGrants,
  // The parts' rows are the decisions; this operation leaves one only when it refuses by itself (scope, credential).
  evidence: 'failures',
  execute: async (ctx) => {
    const call = ctx.inv.body as McpCall;
    if (call.request === null) return { status: 200, body: null };
    const answer = await answerRequest({ ctx, session: call.session, dispatch: (inv) => dispatch(inv, ctx.services) }, call.request);
    return { status: 200, body: answer };
  },
};
