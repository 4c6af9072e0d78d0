/**
 * MCP over Streamable HTTP with the official SDK client (CONTRACT: MCP):
 * initialize, the 401 and the protected-resource metadata, grant-filtered
 * tools/list with stable cursors, tools/call through dispatch() with REST's
 * bodies, and the JSON-RPC error shapes.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { defineEntity, type Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { connect, rawPost, rawSession, setupProject, userWith, withoutCorrelation, type Project, mcpErrorOf } from './support.js';


forEachBackend('MCP tools', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let admin: Client;
  let customerId: string;

  before(async () => {
    server = await startServer({ backend });
    p = await setupProject(server.url, server.adminToken);
    admin = p.admin;
    const c = await admin.post('/api/customers', { email: 'a@example.com', tier: 'pro', secret: 's' });
    expectStatus(c, 201);
    customerId = c.body.data.id;
    for (let i = 0; i < 5; i++) expectStatus(await admin.post('/api/orders', { total: `${10 + i}.50`, status: i % 2 === 0 ? 'paid' : 'pending', customer: customerId }), 201);
  });
  after(async () => {
    await server?.close();
  });

  it('initialize: the client\'s protocolVersion, serverInfo, the four capabilities and a session id', async () => {
    const { client, transport } = await connect(p.endpoint, server.adminToken);
    try {
      assert.deepEqual(client.getServerVersion(), { name: 'plinth', version: '0.1.0' });
      const caps = client.getServerCapabilities()!;
      for (const c of ['tools', 'resources', 'prompts', 'completions']) assert.ok(caps[c as keyof typeof caps] !== undefined, c);
      assert.match(transport.sessionId ?? '', /^[\x21-\x7e]{16,1024}$/, 'visible ASCII (MCP: session ids)');
      assert.equal(transport.protocolVersion, '2025-11-25');
    } finally {
      await client.close();
    }
    // An older supported version is answered as asked; an unknown one gets the newest.
    for (const [asked, answered] of [['2025-03-26', '2025-03-26'], ['2099-01-01', '2025-11-25']]) {
      const r = await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, { authorization: `Bearer ${server.adminToken}` });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.result.protocolVersion, answered);
      assert.ok(r.headers.get('mcp-session-id'));
      assert.ok(r.headers.get('x-service-correlation-id'));
    }
  });

  it('without a valid bearer: 401, WWW-Authenticate naming the metadata, a JSON-RPC error with UNAUTHORIZED; the metadata is public', async () => {
    const init = { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const other = await setupProject(server.url, server.adminToken);
    const otherUser = await userWith(other, []);
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: `Bearer ${otherUser}` }] as Array<Record<string, string>>) {
      const r = await rawPost(p.endpoint, init, headers);
      assert.equal(r.status, 401, r.text);
      const host = new URL(server.url).host;
      const endpoint = `http://${host}/mcp/${p.tenant}/${p.project}`;
      assert.equal(r.headers.get('www-authenticate'), `Bearer resource_metadata="${endpoint}/.well-known/oauth-protected-resource"`);
      assert.equal(r.body.jsonrpc, '2.0');
      assert.equal(r.body.id, 7);
      assert.equal(r.body.error.data.serviceCode, 'UNAUTHORIZED');
      assert.equal(r.body.error.data.correlationId, r.headers.get('x-service-correlation-id'));
    }
    const md = await fetch(`${p.endpoint}/.well-known/oauth-protected-resource`);
    assert.equal(md.status, 200);
    const doc = await md.json();
    assert.deepEqual(Object.keys(doc).sort(), ['authorization_servers', 'bearer_methods_supported', 'resource', 'scopes_supported']);
    assert.equal(doc.resource, `http://${new URL(server.url).host}/mcp/${p.tenant}/${p.project}`);
    assert.equal(doc.authorization_servers.length, 1);
    assert.deepEqual(doc.scopes_supported, ['service:project:read', 'service:operation:invoke', 'service:agent:run', 'service:surface:install']);
    assert.deepEqual(doc.bearer_methods_supported, ['header']);
    // RFC 9728's own form of the path gives the same document.
    const rfc = await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp/${p.tenant}/${p.project}`);
    assert.deepEqual(await rfc.json(), doc);
    // A valid credential on a route naming no project: the scope error as JSON-RPC, not a crash or a 5xx.
    const unknown = await rawPost(`${server.url}/mcp/no-such-tenant/app`, init, { authorization: `Bearer ${server.adminToken}` });
    assert.equal(unknown.status, 200);
    assert.deepEqual([unknown.body.error.code, unknown.body.error.data.serviceCode, unknown.body.error.data.reasonCode], [-32000, 'NOT_FOUND', 'Scope.TenantNotFound']);
  });

  it('tools/list: five tools per entity with JSON Schemas; a read-only user sees only list and get', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['Customer.create', 'Customer.delete', 'Customer.get', 'Customer.list', 'Customer.update', 'Order.create', 'Order.delete', 'Order.get', 'Order.list', 'Order.update']);
      const create = tools.find((t) => t.name === 'Order.create')!;
      const input = (create.inputSchema.properties as any).input;
      assert.equal(input.type, 'object');
      assert.deepEqual(input.required, ['total', 'status', 'customer']);
      assert.deepEqual(input.properties.status.enum, ['pending', 'paid']);
      assert.deepEqual(create.inputSchema.required, ['input']);
      const list = tools.find((t) => t.name === 'Order.list')!;
      assert.deepEqual(Object.keys(list.inputSchema.properties!).sort(), ['cursor', 'fields', 'filter', 'include', 'includeTotal', 'page', 'pageSize', 'sort']);
      assert.deepEqual(tools.find((t) => t.name === 'Order.get')!.inputSchema.required, ['id']);
    } finally {
      await client.close();
    }
    const reader = await userWith(p, [{ grant: 'entity:Order:read' }]);
    const { client: rc } = await connect(p.endpoint, reader);
    try {
      assert.deepEqual((await rc.listTools()).tools.map((t) => t.name), ['Order.get', 'Order.list']);
    } finally {
      await rc.close();
    }
  });

  it('tools/list pages with stable cursors', async () => {
    const q = await setupProject(server.url, server.adminToken);
    for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta']) await defineEntity(q.admin, { entityName: name, fields: [{ name: 'label', type: 'String', nullable: true }] });
    const { client } = await connect(q.endpoint, server.adminToken);
    try {
      const first = await client.listTools();
      assert.equal(first.tools.length, 25);
      assert.ok(typeof first.nextCursor === 'string');
      const again = await client.listTools();
      assert.equal(again.nextCursor, first.nextCursor, 'the same page gives the same cursor');
      const second = await client.listTools({ cursor: first.nextCursor! });
      assert.equal(second.nextCursor, undefined);
      const names = [...first.tools, ...second.tools].map((t) => t.name);
      assert.equal(names.length, 30);
      assert.equal(new Set(names).size, 30);
      // A tool added after the first page does not shift the second.
      await defineEntity(q.admin, { entityName: 'Aaa', fields: [{ name: 'label', type: 'String', nullable: true }] });
      const later = await client.listTools({ cursor: first.nextCursor! });
      assert.deepEqual(later.tools.map((t) => t.name), second.tools.map((t) => t.name));
      const bad = await mcpErrorOf(client.listTools({ cursor: 'garbage' }));
      assert.equal(bad.code, -32602);
    } finally {
      await client.close();
    }
  });

  it('tools/call of every tool: structuredContent is REST\'s body for the same call, content the same JSON', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    const call = async (name: string, args: Record<string, unknown>): Promise<any> => {
      const r = await client.callTool({ name, arguments: args });
      assert.equal(r.isError, false);
      const content = r.content as Array<{ type: string; text: string }>;
      assert.equal(content.length, 1);
      assert.equal(content[0]!.type, 'text');
      assert.deepEqual(JSON.parse(content[0]!.text), r.structuredContent);
      const meta = (r._meta as any).service;
      assert.match(meta.correlationId, /.{8,}/);
      assert.equal(typeof meta.publicationVersion, 'number');
      assert.equal(meta.bindingId, `mcp:Entity.${name.split('.')[0]}.${{ list: 'List', get: 'Read', create: 'Create', update: 'Update', delete: 'Delete' }[name.split('.')[1]!]}`);
      assert.match(meta.descriptorHash, /^sha256:[0-9a-f]{64}$/);
      assert.equal((r.structuredContent as any).meta?.correlationId ?? meta.correlationId, meta.correlationId);
      return r.structuredContent;
    };
    try {
      const list = await call('Order.list', { filter: { status: { eq: 'paid' } }, sort: '-total', pageSize: 2, includeTotal: true, fields: ['total', 'status'] });
      const rest = await admin.get(`/api/orders?filter=${encodeURIComponent(JSON.stringify({ status: { eq: 'paid' } }))}&sort=-total&pageSize=2&includeTotal=true&fields=total,status`);
      expectStatus(rest, 200);
      assert.deepEqual(withoutCorrelation(list), withoutCorrelation(rest.body));
      assert.equal(list.data.length, 2);
      const page2 = await call('Order.list', { filter: { status: { eq: 'paid' } }, sort: '-total', pageSize: 2, page: 2 });
      const rest2 = await admin.get(`/api/orders?filter=${encodeURIComponent(JSON.stringify({ status: { eq: 'paid' } }))}&sort=-total&pageSize=2&page=2`);
      assert.deepEqual(withoutCorrelation(page2), withoutCorrelation(rest2.body));
      const created = await call('Order.create', { input: { total: '99.00', status: 'pending', customer: customerId } });
      const id = created.data.id;
      assert.equal(created.data.total, '99.00');
      const got = await call('Order.get', { id, include: 'customer' });
      const restGot = await admin.get(`/api/orders/${id}?include=customer`);
      assert.deepEqual(withoutCorrelation(got), withoutCorrelation(restGot.body));
      const updated = await call('Order.update', { id, input: { note: 'hi' }, ifMatch: got.data.concurrencyToken });
      assert.equal(updated.data.note, 'hi');
      const restAfter = await admin.get(`/api/orders/${id}`);
      assert.deepEqual(withoutCorrelation(updated), withoutCorrelation(restAfter.body));
      const deleted = await call('Order.delete', { id });
      assert.deepEqual(deleted.data, { id, deleted: true });
      assert.equal(typeof deleted.meta.correlationId, 'string');
      expectStatus(await admin.get(`/api/orders/${id}`), 404);
    } finally {
      await client.close();
    }
  });

  it('errors: -32003 with REST\'s reasonCode for a denied (hidden) tool, -32000 with REST\'s for a failed one, -32602 for an unknown tool or bad arguments', async () => {
    const reader = await userWith(p, [{ grant: 'entity:Order:read' }]);
    const { client } = await connect(p.endpoint, reader);
    try {
      const denied = await mcpErrorOf(client.callTool({ name: 'Order.create', arguments: { input: { total: '1', status: 'paid', customer: customerId } } }));
      assert.equal(denied.code, -32003);
      const data = denied.data as any;
      assert.equal(data.serviceCode, 'ACCESS_DENIED');
      assert.equal(data.reasonCode, 'ExposureBinding.RequiredGrantMissing');
      assert.deepEqual(data.missingGrants, ['entity:Order:insert']);
      assert.match(data.correlationId, /.{8,}/);
      const rest = await admin.with({ token: reader }).post('/api/orders', { total: '1', status: 'paid', customer: customerId });
      assert.equal(rest.body.error.reasonCode, data.reasonCode, 'the same reasonCode as REST');
      const hidden = await mcpErrorOf(client.callTool({ name: 'Customer.list', arguments: {} }));
      assert.equal(hidden.code, -32003);
      assert.equal((hidden.data as any).reasonCode, 'ExposureBinding.RequiredGrantMissing');
      const unknown = await mcpErrorOf(client.callTool({ name: 'Nope.list', arguments: {} }));
      assert.equal(unknown.code, -32602);
      const badArg = await mcpErrorOf(client.callTool({ name: 'Order.list', arguments: { pageSize: 'ten' } }));
      assert.equal(badArg.code, -32602);
      const extra = await mcpErrorOf(client.callTool({ name: 'Order.list', arguments: { bogus: 1 } }));
      assert.equal(extra.code, -32602);
      const missing = await mcpErrorOf(client.callTool({ name: 'Order.get', arguments: { id: '00000000-0000-4000-8000-000000000000' } }));
      assert.equal(missing.code, -32000);
      const restMissing = await admin.get('/api/orders/00000000-0000-4000-8000-000000000000');
      assert.deepEqual([(missing.data as any).serviceCode, (missing.data as any).reasonCode], ['NOT_FOUND', restMissing.body.error.reasonCode]);
    } finally {
      await client.close();
    }
    const { client: ac } = await connect(p.endpoint, server.adminToken);
    try {
      const invalid = await mcpErrorOf(ac.callTool({ name: 'Order.create', arguments: { input: { total: '1' } } }));
      assert.equal(invalid.code, -32000);
      const rest = await admin.post('/api/orders', { total: '1' });
      assert.deepEqual([(invalid.data as any).serviceCode, (invalid.data as any).reasonCode], ['VALIDATION_FAILED', rest.body.error.reasonCode]);
    } finally {
      await ac.close();
    }
  });

  it('a client that declared service.jsonContent gets { type: "json" } content and ping { status: "ok" }; others get {}', async () => {
    const { client } = await connect(p.endpoint, server.adminToken, { 'service.jsonContent': {} });
    const loose = CallToolResultSchema.extend({ content: z.array(z.object({ type: z.string() }).passthrough()) });
    try {
      const r = await client.request({ method: 'tools/call', params: { name: 'Order.list', arguments: { pageSize: 1 } } }, loose);
      assert.equal(r.content.length, 1);
      assert.equal(r.content[0]!.type, 'json');
      assert.deepEqual((r.content[0] as any).json, r.structuredContent);
      const ping = await client.request({ method: 'ping' }, z.object({ status: z.string() }).passthrough());
      assert.equal(ping.status, 'ok');
    } finally {
      await client.close();
    }
    const { client: plain } = await connect(p.endpoint, server.adminToken);
    try {
      assert.deepEqual(await plain.ping(), {});
    } finally {
      await plain.close();
    }
  });

  it('a session opened on one node is good on another node of the same deployment', { skip: backend !== 'postgres' && 'needs a shared database' }, async () => {
    const second = await startServer({ backend, reuse: { dataDir: server.dataDir, databaseUrl: server.databaseUrl }, env: { SERVICE_ADMIN_TOKEN: server.adminToken } });
    try {
      const { client, transport } = await connect(p.endpoint, server.adminToken);
      try {
        const onSecond = `${second.url}/mcp/${p.tenant}/${p.project}`;
        const r = await rawPost(onSecond, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${server.adminToken}`, 'mcp-session-id': transport.sessionId! });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.result.tools.length, 10);
      } finally {
        await client.close();
      }
    } finally {
      await second.stop();
    }
  });

  it('sessions: an unknown session is 404, DELETE ends one, GET is 405', async () => {
    const s = await rawSession(p.endpoint, server.adminToken);
    const auth = { authorization: `Bearer ${server.adminToken}` };
    const ok = await s.call('tools/list');
    assert.equal(ok.status, 200, ok.text);
    const unknown = await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...auth, 'mcp-session-id': 'f'.repeat(32) });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, -32001);
    // A session id is signed: a tampered one, or one of another endpoint, names no session.
    const tampered = s.sessionId.slice(0, -2) + (s.sessionId.endsWith('AA') ? 'BB' : 'AA');
    assert.equal((await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...auth, 'mcp-session-id': tampered })).status, 404);
    const other = await setupProject(server.url, server.adminToken);
    assert.equal((await rawPost(other.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...auth, 'mcp-session-id': s.sessionId })).status, 404);
    // The credential is checked before the session.
    assert.equal((await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: 'Bearer nope', 'mcp-session-id': 'f'.repeat(32) })).status, 401);
    const del = await fetch(p.endpoint, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': s.sessionId } });
    assert.equal(del.status, 200);
    const gone = await s.call('tools/list');
    assert.equal(gone.status, 404);
    const get = await fetch(p.endpoint, { headers: { ...auth, accept: 'text/event-stream' } });
    assert.equal(get.status, 405);
    // A client that only takes SSE gets the answer as one `message` event.
    const s2 = await rawSession(p.endpoint, server.adminToken);
    const sse = await fetch(p.endpoint, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': s2.sessionId }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }) });
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(await sse.text(), 'event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n');
    // A notification is accepted with 202.
    const note = await rawPost(p.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...auth, 'mcp-session-id': s2.sessionId });
    assert.equal(note.status, 202);
  });
});
