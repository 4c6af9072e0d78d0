import { MCP_SCOPES } from '../../runtime/mcp/scopes.js';

/** A Host header we are willing to echo into absolute URLs (name or IP literal, optional port). */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * `http://<Host>`: uWS serves plain HTTP here and there is no trusted proxy
 * header, so the scheme is http and the authority is the request's Host
 * when it is well-formed (docs/mcp.md; behind a TLS proxy the proxy must
 * pass the public Host).
 */
export const originOf = (host: string): string => `http://${HOST.test(host) ? host : 'localhost'}`;

/** The absolute MCP endpoint URL of a route. */
export const endpointUrl = (host: string, tenant: string, project: string): string =>
  `${originOf(host)}/mcp/${encodeURIComponent(tenant)}/${encodeURIComponent(project)}`;

export const METADATA_SUFFIX = '/.well-known/oauth-protected-resource';

/** `WWW-Authenticate` of a 401 (CONTRACT: MCP; RFC 9728 §5.1). */
export const wwwAuthenticate = (endpoint: string): string => `Bearer resource_metadata="${endpoint}${METADATA_SUFFIX}"`;

/**
 * The protected-resource metadata (RFC 9728; CONTRACT: MCP). The
 * authorization server is the platform's identity service of the project
 * (`/api/identity`: login, refresh and federation issue the project's
 * access tokens).
 */
export function protectedResourceMetadata(host: string, tenant: string, project: string): Record<string, unknown> {
  return {
    resource: endpointUrl(host, tenant, project),
    authorization_servers: [`${originOf(host)}/api/identity`],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
  };
}
