import type { ServiceError } from '../errors/service-error.js';
import type { Invocation, OperationContext, Result } from '../operations/types.js';
import { grantCovered, heldGrants } from '../pipeline/grants.js';
import type { ExposureBinding } from '../publication/bindings.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import type { DeprecationNotice } from '../versioning/stability-cache.js';

/** What a session remembers of its `initialize` (CONTRACT: MCP), handed in with each message. */
export interface McpSessionState {
  id: string;
  protocolVersion: string;
  /** The client declared `capabilities.experimental["service.jsonContent"]`: tool results carry `{ type: "json" }` content, ping `{ status: "ok" }`. */
  jsonContent: boolean;
}

/** Dispatches one part of an MCP request (runtime/dispatch.ts, passed in to keep this module below it). */
export type DispatchPart = (inv: Invocation) => Promise<{ ok: true; result: Result } | { ok: false; error: ServiceError }>;

/** One JSON-RPC request being answered: the `Mcp.Request` operation's context (actor, pinned publication), the session, the dispatcher. */
export interface McpRequestContext {
  ctx: OperationContext;
  session: McpSessionState | null;
  dispatch: DispatchPart;
}

export const publicationOf = (rc: McpRequestContext): CompiledPublication => rc.ctx.scope!.publication;

const NO_QUERY: ReadonlyMap<string, string> = new Map();

/**
 * A part of the request as its own dispatch (a tool's entity operation, a
 * schema read), with `protocol: 'mcp'`: stage 1 ran for the request, so the
 * part keeps its actor instead of verifying the token again; every other
 * stage (scope, governance, grants, row policy, quotas, audit) runs for it.
 */
export function partInvocation(rc: McpRequestContext, part: Pick<Invocation, 'operation'> & Partial<Invocation>): Invocation {
  const base = rc.ctx.inv;
  return {
    correlationId: base.correlationId, protocol: 'mcp', collection: null, relation: null, params: {}, query: NO_QUERY, body: undefined,
    bearer: base.bearer, tenantHeader: base.tenantHeader, projectHeader: base.projectHeader, branchHeader: base.branchHeader,
    idempotencyKey: null, ifMatch: null, basePath: base.basePath, clientAddress: base.clientAddress ?? null,
    authenticated: rc.ctx.actor,
    ...part,
  };
}

/** The caller's grant check for what it is shown (lists, completion); calls are still decided by dispatch. */
export async function grantView(rc: McpRequestContext): Promise<(required: readonly string[]) => boolean> {
  const held = await heldGrants(rc.ctx);
  if (held === 'all') return () => true;
  return (required) => required.every((g) => grantCovered(held.grants, g));
}

/** The MCP bindings of a publication by id. */
const mcpBindings = (pub: CompiledPublication): ReadonlyMap<string, ExposureBinding> =>
  pub.derive('mcp-bindings', () => new Map(pub.bindings.filter((b) => b.protocolKind === 'Mcp').map((b) => [b.bindingId, b])));

/**
 * The spec's `service` metadata of a result (spec: MCP, "Responses may carry
 * a `service` metadata object"), placed in the result's `_meta.service`:
 * correlationId and publicationVersion always, the binding's id and
 * descriptorHash when the method ran a binding (a tool, a resource, the prompt),
 * and that binding's `deprecation` when it is Deprecated (REST's Deprecation,
 * Sunset and Link headers; MCP has no place of its own for them).
 */
export function serviceMeta(rc: McpRequestContext, bindingId?: string, deprecation?: DeprecationNotice): { service: Record<string, unknown> } {
  const pub = rc.ctx.scope?.publication;
  const service: Record<string, unknown> = { correlationId: rc.ctx.inv.correlationId };
  if (pub !== undefined) service.publicationVersion = pub.version;
  const binding = bindingId === undefined || pub === undefined ? undefined : mcpBindings(pub).get(bindingId);
  if (binding !== undefined) {
    service.bindingId = binding.bindingId;
    service.descriptorHash = binding.descriptorHash;
  }
  if (deprecation !== undefined) service.deprecation = deprecation;
  return { service };
}
