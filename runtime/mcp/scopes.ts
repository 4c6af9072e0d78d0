import { accessDenied, type ServiceError } from '../errors/service-error.js';
import type { Actor } from '../identity/index.js';

/**
 * MCP scopes (spec: Authentication, "MCP scopes"). A scope limits what a
 * credential may do through `/mcp`; it never grants anything: a call still
 * needs the operation's grants. Only an API key created with `scopes` is
 * limited; a user token, the admin token and a key without `scopes` hold
 * every scope (docs/mcp.md).
 */
export const MCP_SCOPES = ['service:project:read', 'service:operation:invoke', 'service:agent:run', 'service:surface:install'] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

/** List and read resources, prompts, completion, and the non-mutating tools. */
export const READ_SCOPE: McpScope = 'service:project:read';
/** The tools that change data. */
export const INVOKE_SCOPE: McpScope = 'service:operation:invoke';

export const holdsScope = (actor: Actor, scope: McpScope): boolean => actor.mcpScopes === undefined || actor.mcpScopes.has(scope);

export const scopeMissing = (scope: McpScope): ServiceError =>
  accessDenied('Mcp.Scope.Missing', `this token lacks the MCP scope ${scope}`, { missingScopes: [scope] });

/** Throws the -32003 denial unless the actor holds `scope`. */
export function requireScope(actor: Actor, scope: McpScope): void {
  if (!holdsScope(actor, scope)) throw scopeMissing(scope);
}
