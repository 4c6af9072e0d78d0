/** Shared setup of the MCP tests: the official SDK client on a real server, raw JSON-RPC over fetch, and a project. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';

export const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'], default: 'free' },
    { name: 'secret', type: 'String', nullable: true },
  ],
};
export const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] },
    { name: 'note', type: 'String', nullable: true },
    { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
  ],
};

export interface Project {
  admin: Client;
  projectId: string;
  tenant: string;
  project: string;
  /** `<server>/mcp/<tenant>/<project>` */
  endpoint: string;
}

export async function setupProject(baseUrl: string, adminToken: string): Promise<Project> {
  const p = await bootstrapProject(baseUrl, adminToken);
  await defineEntity(p.client, CUSTOMER);
  await defineEntity(p.client, ORDER);
  return { admin: p.client, projectId: p.projectId, tenant: p.tenant, project: p.project, endpoint: `${baseUrl}/mcp/${p.tenant}/${p.project}` };
}

/** Registers a user holding `grants` (each `{ grant, fields? }` for the user's own subject) and returns its access token. */
export async function userWith(p: Project, grants: Array<{ grant: string; fields?: string[] }>): Promise<string> {
  const anon = p.admin.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  const reg = await anon.post('/api/identity/register', { email, password: 'long enough pw' });
  expectStatus(reg, 201);
  for (const g of grants) expectStatus(await p.admin.post(`/api/projects/${p.projectId}/capability-grants`, { subjectId: reg.body.data.subjectId, ...g }), 201);
  const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
  expectStatus(login, 200);
  return login.body.accessToken;
}

/** Creates an API key with `grants` and `scopes` and returns its secret. */
export async function apiKeyWith(p: Project, grants: string[], scopes?: string[]): Promise<string> {
  const k = await p.admin.post(`/api/projects/${p.projectId}/api-keys`, { name: `k${randomUUID().slice(0, 8)}`, grants, ...(scopes === undefined ? {} : { scopes }) });
  expectStatus(k, 201);
  const reveal = await p.admin.post(`/api/CredentialReveal/${k.body.data.revealTokenId}/reveal`);
  expectStatus(reveal, 200);
  return reveal.body.data.secret;
}

/** An SDK client connected with `token`; `experimental` capabilities go into initialize. */
export async function connect(endpoint: string, token: string, experimental?: Record<string, object>): Promise<{ client: McpClient; transport: StreamableHTTPClientTransport }> {
  const client = new McpClient({ name: 'plinth-test', version: '1.0.0' }, { capabilities: experimental === undefined ? {} : { experimental } });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return { client, transport };
}

export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One raw POST to the endpoint: `body` as is when a string, else JSON. */
export async function rawPost(endpoint: string, body: unknown, headers: Record<string, string> = {}): Promise<RawReply> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** A raw session: initialize over fetch, then send requests with its id. */
export async function rawSession(endpoint: string, token: string, capabilities: Record<string, unknown> = {}): Promise<{ sessionId: string; call: (method: string, params?: unknown, id?: unknown) => Promise<RawReply> }> {
  const auth = { authorization: `Bearer ${token}` };
  const init = await rawPost(endpoint, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } } }, auth);
  if (init.status !== 200) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  const sessionId = init.headers.get('mcp-session-id')!;
  let next = 1;
  return {
    sessionId,
    call: (method, params, id) => rawPost(endpoint, { jsonrpc: '2.0', id: id ?? next++, method, ...(params === undefined ? {} : { params }) }, { ...auth, 'mcp-session-id': sessionId }),
  };
}

/** The REST body without the per-request correlation id, to compare bodies of two calls. */
export function withoutCorrelation(body: any): any {
  const copy = structuredClone(body);
  if (copy?.meta !== undefined) delete copy.meta.correlationId;
  return copy;
}

/** The error an SDK request rejected with, as McpError. */
export async function mcpErrorOf(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof McpError, `expected an McpError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}
