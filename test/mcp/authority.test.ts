/**
 * What limits an MCP caller and what it leaves behind (CONTRACT: MCP; spec:
 * MCP scopes): API-key scopes, idempotent retries, the audit record of a
 * refused tool call, the `service` metadata and the MCP exposure bindings.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { apiKeyWith, connect, rawSession, setupProject, userWith, type Project, mcpErrorOf } from './support.js';


const ALL_ORDER = ['entity:Order:*', 'entity:Customer:*'];

forEachBackend('MCP authority', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let customerId: string;

  before(async () => {
    server = await startServer({ backend });
    p = await setupProject(server.url, server.adminToken);
    const c = await p.admin.post('/api/customers', { email: 'a@example.com' });
    expectStatus(c, 201);
    customerId = c.body.data.id;
  });
  after(async () => {
    await server?.close();
  });

  it('scopes: project:read limits a key to reads, operation:invoke to writes; no scopes means every scope', async () => {
    const reader = await apiKeyWith(p, ALL_ORDER, ['service:project:read']);
    const { client: r } = await connect(p.endpoint, reader);
    try {
      assert.deepEqual((await r.listTools()).tools.map((t) => t.name), ['Customer.get', 'Customer.list', 'Order.get', 'Order.list']);
      assert.equal((await r.callTool({ name: 'Order.list', arguments: {} })).isError, false);
      const denied = await mcpErrorOf(r.callTool({ name: 'Order.create', arguments: { input: { total: '1', status: 'paid', customer: customerId } } }));
      assert.equal(denied.code, -32003);
      assert.deepEqual([(denied.data as any).serviceCode, (denied.data as any).reasonCode], ['ACCESS_DENIED', 'Mcp.Scope.Missing']);
      assert.deepEqual((denied.data as any).missingScopes, ['service:operation:invoke']);
      assert.equal((await r.listResources()).resources.length, 2);
    } finally {
      await r.close();
    }
    const invoker = await apiKeyWith(p, ALL_ORDER, ['service:operation:invoke']);
    const { client: w } = await connect(p.endpoint, invoker);
    try {
      assert.deepEqual((await w.listTools()).tools.map((t) => t.name), ['Customer.create', 'Customer.delete', 'Customer.update', 'Order.create', 'Order.delete', 'Order.update']);
      const made = await w.callTool({ name: 'Order.create', arguments: { input: { total: '1', status: 'paid', customer: customerId } } });
      assert.equal((made.structuredContent as any).data.total, '1');
      const list = await mcpErrorOf(w.callTool({ name: 'Order.list', arguments: {} }));
      assert.equal(list.code, -32003);
      const res = await mcpErrorOf(w.listResources());
      assert.deepEqual([res.code, (res.data as any).reasonCode], [-32003, 'Mcp.Scope.Missing']);
      const prompts = await mcpErrorOf(w.listPrompts());
      assert.equal(prompts.code, -32003);
    } finally {
      await w.close();
    }
    const unscoped = await apiKeyWith(p, ['entity:Order:read']);
    const { client: u } = await connect(p.endpoint, unscoped);
    try {
      assert.deepEqual((await u.listTools()).tools.map((t) => t.name), ['Order.get', 'Order.list'], 'grants still decide');
    } finally {
      await u.close();
    }
    const none = await apiKeyWith(p, ALL_ORDER, []);
    const { client: n } = await connect(p.endpoint, none);
    try {
      assert.deepEqual((await n.listTools()).tools, []);
      assert.deepEqual(await n.ping(), {});
    } finally {
      await n.close();
    }
  });

  it('a retry with the same JSON-RPC id and idempotencyKey writes once; the key with another input is a conflict', async () => {
    const user = await userWith(p, [{ grant: 'entity:Order:*' }]);
    const s = await rawSession(p.endpoint, user);
    const params = { name: 'Order.create', arguments: { input: { total: '7.00', status: 'paid', customer: customerId, note: 'idem' }, idempotencyKey: 'k-1' } };
    const first = await s.call('tools/call', params, 42);
    const second = await s.call('tools/call', params, 42);
    assert.equal(first.status, 200, first.text);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.id, 42);
    assert.deepEqual(second.body.result.structuredContent.data, first.body.result.structuredContent.data);
    const rows = await p.admin.get(`/api/orders?filter=${encodeURIComponent(JSON.stringify({ note: { eq: 'idem' } }))}&includeTotal=true`);
    expectStatus(rows, 200);
    assert.equal(rows.body.data.length, 1, 'one row');
    const other = await s.call('tools/call', { name: 'Order.create', arguments: { input: { total: '8.00', status: 'paid', customer: customerId }, idempotencyKey: 'k-1' } }, 43);
    assert.equal(other.body.error.code, -32000);
    assert.deepEqual([other.body.error.data.serviceCode, other.body.error.data.reasonCode], ['CONFLICT', 'Idempotency.KeyReused']);
  });

  it('a refused tool call is recorded as an MCP call of the tool\'s binding', async () => {
    const reader = await userWith(p, [{ grant: 'entity:Order:read' }]);
    const { client } = await connect(p.endpoint, reader);
    let correlationId: string;
    try {
      const denied = await mcpErrorOf(client.callTool({ name: 'Order.delete', arguments: { id: '00000000-0000-4000-8000-000000000000' } }));
      correlationId = (denied.data as any).correlationId;
    } finally {
      await client.close();
    }
    let record: any;
    for (let i = 0; i < 60 && record?.operationId !== 'Entity.Order.Delete'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      record = (await p.admin.get(`/api/Explainability/access?correlationId=${encodeURIComponent(correlationId)}`)).body?.data;
    }
    assert.deepEqual([record.operationId, record.decision, record.reasonCode, record.protocol], ['Entity.Order.Delete', 'Deny', 'ExposureBinding.RequiredGrantMissing', 'mcp']);
    assert.equal(record.bindingId, 'mcp:Entity.Order.Delete');
  });

  it('MCP bindings: McpTool per tool with its REST twin\'s grants, McpResource per entity, the McpPrompt; hashes deterministic and in _meta.service', async () => {
    const read = async (): Promise<any> => {
      const r = await p.admin.get('/api/Schema/entities/metadata');
      expectStatus(r, 200);
      return r.body.data;
    };
    const m = await read();
    const order = m.entities.find((e: any) => e.entityName === 'Order');
    const mcp = order.bindings.filter((b: any) => b.protocolKind === 'Mcp');
    assert.deepEqual(mcp.map((b: any) => [b.bindingId, b.exposureShape, b.routeOrName]), [
      ['mcp:Entity.Order.List', 'McpTool', 'Order.list'],
      ['mcp:Entity.Order.Create', 'McpTool', 'Order.create'],
      ['mcp:Entity.Order.Read', 'McpTool', 'Order.get'],
      ['mcp:Entity.Order.Update', 'McpTool', 'Order.update'],
      ['mcp:Entity.Order.Delete', 'McpTool', 'Order.delete'],
      ['mcp:Entity.Order.Schema', 'McpResource', 'service://schema/entities/Order'],
    ]);
    for (const b of mcp.filter((x: any) => x.exposureShape === 'McpTool')) {
      const rest = order.bindings.find((x: any) => x.bindingId === `rest:${b.capabilityId}`);
      assert.deepEqual(b.requiredGrantSet, rest.requiredGrantSet);
      assert.match(b.descriptorHash, /^sha256:[0-9a-f]{64}$/);
    }
    assert.deepEqual(mcp.find((b: any) => b.exposureShape === 'McpResource').requiredGrantSet, ['entity:Order:read']);
    assert.deepEqual((await read()).entities.find((e: any) => e.entityName === 'Order').bindings, order.bindings, 'deterministic');
    const surface = await p.admin.get('/api/Explainability/surface');
    expectStatus(surface, 200);
    // Five tools and a resource per entity (Customer, Order), and the prompt.
    assert.equal(surface.body.data.surfaces.find((s: any) => s.surfaceName === 'mcp').bindingCount, 13);
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const r = await client.callTool({ name: 'Order.list', arguments: {} });
      const service = (r._meta as any).service;
      const binding = mcp.find((b: any) => b.bindingId === 'mcp:Entity.Order.List');
      assert.deepEqual([service.bindingId, service.descriptorHash, service.publicationVersion], [binding.bindingId, binding.descriptorHash, binding.publicationVersion]);
      const res = await client.readResource({ uri: 'service://schema/entities/Order' });
      assert.equal((res._meta as any).service.bindingId, 'mcp:Entity.Order.Schema');
      const prompt = await client.getPrompt({ name: 'entity.describe', arguments: { entity: 'Order' } });
      assert.equal((prompt._meta as any).service.bindingId, 'mcp:Prompt.entity.describe');
      assert.match((prompt._meta as any).service.descriptorHash, /^sha256:/);
    } finally {
      await client.close();
    }
  });
});
