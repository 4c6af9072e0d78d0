/**
 * Issue 23 part 3: `GET /api/ExecutionCapabilityMatrix/matrix` says, for every
 * protocol and every entity capability (each entity operation kind, and
 * Subscribe), true exactly when the protocol really serves it. Each
 * protocol's served set is found from the protocol itself, over real
 * sockets: what its own discovery offers (GraphQL introspection, MCP
 * `tools/list`, the served proto), named by CONTRACT's names, and a real call
 * of each that succeeds. Every cell of the matrix is compared, none sampled.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { controlData } from './support.js';
import { grpcProtocol } from '../support/grpc-protocol.js';
import { graphqlProtocol, isRefusal, mcpProtocol, type Protocol } from '../support/protocols.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, fetchProto, loadProto, metadata } from '../grpc/support.js';

/** The spec's entity operation kinds, and Subscribe: the matrix's columns. */
const CAPABILITIES = [
  'Create', 'Read', 'Update', 'Replace', 'Delete', 'List', 'Count', 'BatchCreate', 'BatchUpdate', 'BatchDelete',
  'RelationList', 'RelationAttach', 'RelationDetach', 'Subscribe',
];
const PROTOCOLS = ['rest', 'graphql', 'realtime', 'webhooks', 'mcp', 'grpc'];

/** CONTRACT's names of what each protocol offers of `Order`, and the capability each is. */
const GRAPHQL_FIELDS: Record<string, string> = { orders: 'List', order: 'Read', createOrder: 'Create', updateOrder: 'Update', deleteOrder: 'Delete', orderChanged: 'Subscribe' };
const MCP_TOOLS: Record<string, string> = { 'Order.list': 'List', 'Order.get': 'Read', 'Order.create': 'Create', 'Order.update': 'Update', 'Order.delete': 'Delete' };
const GRPC_METHODS: Record<string, string> = { Get: 'Read', List: 'List', StreamList: 'List', Create: 'Create', Update: 'Update', Delete: 'Delete', BatchCreate: 'BatchCreate', Watch: 'Subscribe' };

/** The five CRUD capabilities through a differential-suite protocol: the ones whose real call succeeded. */
async function crudServed(p: Protocol, offered: ReadonlySet<string>): Promise<Set<string>> {
  const served = new Set<string>();
  const ok = (kind: string, answer: unknown): void => {
    if (offered.has(kind) && !isRefusal(answer)) served.add(kind);
  };
  const created = await p.create({ status: `${p.name} row` });
  ok('Create', created);
  const id = String((created as { id?: unknown }).id);
  ok('Read', await p.get(id));
  ok('List', await p.list({ filter: null, sort: 'createdAt', pageSize: 5 }));
  ok('Update', await p.update(id, { status: `${p.name} changed` }));
  ok('Delete', await p.remove(id));
  return served;
}

forEachBackend('execution capability matrix', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let project: string;
  const closers: Array<() => Promise<void> | void> = [];

  before(async () => {
    server = await startServer({ backend, env: { GRPC_PORT: '0' } });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ client: admin, tenant, project } = p);
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }] });
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }, { name: 'customer', type: 'ID', nullable: true, references: 'Customer' }] });
  });
  after(async () => {
    for (const c of closers) await c();
    await server?.close();
  });

  /** REST: a real request of every entity operation kind (CONTRACT's routes); served when it succeeds. */
  async function restServed(): Promise<Set<string>> {
    const served = new Set<string>();
    const call = async (kind: string, method: string, path: string, body?: unknown): Promise<any> => {
      const r = await admin.request(method, `/api/${path}`, body);
      if (r.status >= 200 && r.status < 300) served.add(kind);
      return r.body;
    };
    const customer = (await call('Create', 'POST', 'customers', { email: 'c@example.com' })).data.id;
    const id = (await call('Create', 'POST', 'orders', { status: 'a' })).data.id;
    await call('Read', 'GET', `orders/${id}`);
    await call('Update', 'PATCH', `orders/${id}`, { status: 'b' });
    await call('Replace', 'PUT', `orders/${id}`, { status: 'c' });
    await call('List', 'GET', 'orders');
    await call('Count', 'GET', 'orders/count');
    const batch = (await call('BatchCreate', 'POST', 'orders/batch', { items: [{ status: 'd' }, { status: 'e' }] })).data;
    await call('BatchUpdate', 'PATCH', 'orders/batch', { items: [{ id: batch[0].id, status: 'f' }] });
    await call('BatchDelete', 'POST', 'orders/batch/delete', { ids: [batch[1].id] });
    await call('RelationAttach', 'POST', `customers/${customer}/orders`, { relatedId: id });
    await call('RelationList', 'GET', `customers/${customer}/orders`);
    await call('RelationDetach', 'DELETE', `customers/${customer}/orders/${id}`);
    await call('Delete', 'DELETE', `orders/${id}`);
    return served;
  }

  /** GraphQL: the root fields introspection shows for Order, each run for real (the subscription field as introspection shows it). */
  async function graphqlServed(): Promise<Set<string>> {
    const r = await admin.post('/graphql', { query: '{ __schema { queryType { fields { name } } mutationType { fields { name } } subscriptionType { fields { name } } } }' });
    const s = r.body.data.__schema;
    const fields = [s.queryType, s.mutationType, s.subscriptionType].flatMap((t: any) => (t?.fields ?? []).map((f: any) => f.name as string))
      .filter((n: string) => /order/i.test(n));
    for (const f of fields) assert.ok(f in GRAPHQL_FIELDS, `GraphQL root field ${f} is not one CONTRACT names`);
    const offered = new Set(fields.map((f: string) => GRAPHQL_FIELDS[f]!));
    const served = await crudServed(graphqlProtocol(admin, ['id', 'status']), offered);
    if (offered.has('Subscribe')) served.add('Subscribe');
    return served;
  }

  /** MCP: the tools `tools/list` offers for Order, each called for real; a Count tool is asked for by name too. */
  async function mcpServed(): Promise<Set<string>> {
    const endpoint = `${server.url}/mcp/${tenant}/${project}`;
    const client = new McpClient({ name: 'plinth-matrix', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: `Bearer ${server.adminToken}` } } }));
    closers.push(() => client.close());
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('Order.'));
    for (const n of names) assert.ok(n in MCP_TOOLS, `MCP tool ${n} is not one CONTRACT names`);
    await assert.rejects(client.callTool({ name: 'Order.count', arguments: {} }), (e: any) => e.code === -32602, 'no Count tool');
    const p = await mcpProtocol(endpoint, server.adminToken);
    closers.push(() => p.close());
    return crudServed(p, new Set(names.map((n) => MCP_TOOLS[n]!)));
  }

  /** gRPC: the methods of OrderService in the served proto, each called for real; a Count method is called too. */
  async function grpcServed(): Promise<Set<string>> {
    const proto = await fetchProto(admin);
    const service = /service OrderService \{([^}]*)\}/.exec(proto)![1]!;
    const methods = [...service.matchAll(/rpc (\w+)\(/g)].map((m) => m[1]!);
    for (const m of methods) assert.ok(m in GRPC_METHODS, `gRPC method ${m} is not one CONTRACT names`);
    const p = await grpcProtocol(server, server.adminToken, tenant, project);
    closers.push(() => p.close());
    const served = await crudServed(p, new Set(methods.filter((m) => ['Get', 'List', 'Create', 'Update', 'Delete'].includes(m)).map((m) => GRPC_METHODS[m]!)));
    const orders = clientOf(loadProto(proto), 'OrderService', server.node.grpcPort);
    closers.push(() => orders.close());
    const md = metadata(server.adminToken, tenant, project);
    if (methods.includes('BatchCreate')) {
      const err = await new Promise<grpc.ServiceError | null>((resolve) => {
        const call = orders.BatchCreate(md, (e: grpc.ServiceError | null) => resolve(e));
        call.write({ status: 'batched' });
        call.end();
      });
      if (err === null) served.add('BatchCreate');
    }
    // Watch: a server stream that stays open (no status) until the client cancels it.
    if (methods.includes('Watch')) {
      const call = orders.Watch({}, md);
      const outcome = await new Promise<string>((resolve) => {
        call.on('error', (e: grpc.ServiceError) => resolve(`error ${e.code}`));
        call.on('data', () => {});
        setTimeout(() => resolve('open'), 500);
      });
      call.cancel();
      if (outcome === 'open') served.add('Subscribe');
    }
    const pass = (b: Buffer): Buffer => b;
    const count = await new Promise<grpc.ServiceError | null>((resolve) => orders.makeUnaryRequest('/service.app.OrderService/Count', pass, pass, Buffer.alloc(0), md, (e: grpc.ServiceError | null) => resolve(e)));
    assert.equal(count?.code, grpc.status.UNIMPLEMENTED, 'no Count method');
    return served;
  }

  /** Realtime: a real subscription to Order over the WebSocket; it offers no entity operation. */
  async function realtimeServed(): Promise<Set<string>> {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/realtime`, { headers: { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': tenant, 'x-service-project': project } });
    closers.push(() => ws.terminate());
    const reply = await new Promise<any>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity: 'Order' })));
      ws.on('message', (data) => resolve(JSON.parse(data.toString())));
    });
    return new Set(reply.type === 'subscribed' ? ['Subscribe'] : []);
  }

  it('says true exactly for what each protocol really serves, for every protocol and every capability', async () => {
    const served: Record<string, Set<string>> = {
      rest: await restServed(),
      graphql: await graphqlServed(),
      realtime: await realtimeServed(),
      // Webhooks deliver committed events to registered endpoints: no entity operation is requested over them.
      webhooks: new Set(),
      mcp: await mcpServed(),
      grpc: await grpcServed(),
    };
    const m = controlData(await admin.get('/api/ExecutionCapabilityMatrix/matrix'), 200, 'ExecutionCapabilityMatrix');
    assert.deepEqual([...m.protocols].sort(), [...PROTOCOLS].sort());
    assert.deepEqual([...m.capabilities].sort(), [...CAPABILITIES].sort());
    assert.deepEqual(Object.keys(m.matrix).sort(), [...PROTOCOLS].sort());
    const wrong: string[] = [];
    for (const p of PROTOCOLS) {
      assert.deepEqual(Object.keys(m.matrix[p]).sort(), [...CAPABILITIES].sort(), p);
      for (const c of CAPABILITIES) if (m.matrix[p][c] !== served[p]!.has(c)) wrong.push(`${p} × ${c}: matrix ${m.matrix[p][c]}, served ${served[p]!.has(c)}`);
    }
    assert.deepEqual(wrong, []);
    // Every call above reached its protocol: each protocol but webhooks served something.
    for (const p of PROTOCOLS.filter((x) => x !== 'webhooks')) assert.ok(served[p]!.size > 0, p);
  });
});
