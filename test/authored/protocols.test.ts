/**
 * Issue 24 part 4: authored operations over GraphQL, gRPC and MCP (CONTRACT
 * "Operations (CoreHandler, EdgeHandler, ManagementHandler)", "Every
 * protocol exposes it"), on a real server through real clients: HTTP
 * GraphQL, @grpc/grpc-js with the served proto and server reflection, and
 * the @modelcontextprotocol/sdk client.
 *
 * The handlers are declared through `POST /api/Schema/handlers` (CONTRACT
 * "Handlers"). Until that route is on the branch (it comes with the handlers
 * part of issue 24), the listing tests pin the same HandlerDefs into the
 * project's serving publication directly (support: protocols-setup.ts),
 * and the tests that call the operations skip, saying so.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { buildSchema } from 'graphql';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import type { Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, fetchProto, loadProto, metadata, serviceTrailers, unary } from '../grpc/support.js';
import { connect, mcpErrorOf, setupProject, userWith, type Project } from '../mcp/support.js';
import { declareOperations, jsonOfStruct, reflect, structOf, type DeclaredBy } from './protocols-setup.js';

/** GraphQL over HTTP, as any client posts it. */
async function gql(client: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await client.post('/graphql', { query, ...(variables === undefined ? {} : { variables }) });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

forEachBackend('authored operations over GraphQL, gRPC and MCP', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let by: DeclaredBy;
  let orderId: string;
  /** A project user holding only `entity:Order:read`: no operation grant. */
  let reader: string;
  const grpcClients: grpc.Client[] = [];

  before(async () => {
    server = await startServer({ backend });
    p = await setupProject(server.url, server.adminToken);
    const customer = await p.admin.post('/api/customers', { email: `${randomUUID()}@example.com` });
    expectStatus(customer, 201);
    const order = await p.admin.post('/api/orders', { total: '12.50', status: 'pending', customer: customer.body.data.id });
    expectStatus(order, 201);
    orderId = order.body.data.id;
    by = await declareOperations(server, p);
    reader = await userWith(p, [{ grant: 'entity:Order:read' }]);
  });
  after(async () => {
    for (const c of grpcClients) c.close();
    await server.close();
  });

  const grpcOf = (service: string, pkg: any): any => {
    const c = clientOf(pkg, service, server.node.grpcPort);
    grpcClients.push(c);
    return c;
  };

  it('GraphQL: the schema has <name>(id: ID!, input: <Name>Input!): <Name>Result! and project mutations without id, JSON where not an object of scalars', async () => {
    const sdl = await p.admin.get('/graphql/schema');
    expectStatus(sdl, 200);
    const mutation = buildSchema(sdl.text).getMutationType()!.getFields();
    assert.deepEqual(mutation.approve!.args.map((a) => `${a.name}: ${String(a.type)}`), ['id: ID!', 'input: ApproveInput!']);
    assert.equal(String(mutation.approve!.type), 'ApproveResult!');
    assert.match(sdl.text, /input ApproveInput \{\n {2}reason: String!\n {2}rush: Boolean\n\}/, 'fields by name (the model is jsonb: no key order)');
    assert.match(sdl.text, /type ApproveResult \{\n {2}id: String\n {2}ok: Boolean!\n {2}reason: String\n\}/);
    assert.deepEqual(mutation.shout!.args.map((a) => `${a.name}: ${String(a.type)}`), ['input: ShoutInput!']);
    assert.equal(String(mutation.shout!.type), 'JSON!', 'a string output is no object of scalars');
    // Introspection over HTTP sees the same field.
    const intro = await gql(p.admin, '{ __type(name: "Mutation") { fields { name } } }');
    assert.ok(intro.data.__type.fields.some((f: any) => f.name === 'approve'));
  });

  it('gRPC: Approve on OrderService and Shout on OperationService, Struct in and out, in the served proto and in reflection', async () => {
    const text = await fetchProto(p.admin);
    assert.match(text, /service OrderService \{[^}]*rpc Approve\(google\.protobuf\.Struct\) returns \(google\.protobuf\.Struct\);/s);
    assert.match(text, /service OperationService \{[^}]*rpc Shout\(google\.protobuf\.Struct\) returns \(google\.protobuf\.Struct\);/s);
    const pkg = loadProto(text);
    assert.equal(typeof pkg.service.app.OperationService, 'function', 'proto-loader builds an OperationService client');
    const md = metadata(server.adminToken, p.tenant, p.project);
    const { answers, error } = await reflect(server.node.grpcPort, md, [{ list_services: '*' }, { file_containing_symbol: 'service.app.OperationService' }]);
    assert.equal(error, null);
    assert.ok(answers[0].list_services_response.service.some((s: any) => s.name === 'service.app.OperationService'));
    const file = descriptor.FileDescriptorProto.decode(answers[1].file_descriptor_response.file_descriptor_proto[0]) as any;
    const approve = file.service.find((s: any) => s.name === 'OrderService').method.find((m: any) => m.name === 'Approve');
    assert.deepEqual([approve.inputType, approve.outputType], ['.google.protobuf.Struct', '.google.protobuf.Struct']);
  });

  it('MCP: Order.approve takes { id, input } and operations.shout takes the input; tools/list is grant-filtered', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const tools = new Map<string, any>();
      for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        for (const t of page.tools) tools.set(t.name, t);
        cursor = page.nextCursor;
      }
      const approve = tools.get('Order.approve');
      assert.deepEqual(approve.inputSchema.required, ['id', 'input']);
      assert.deepEqual(approve.inputSchema.properties.input.required, ['reason']);
      assert.deepEqual(tools.get('operations.shout').inputSchema.properties, { text: { type: 'string' } });
    } finally {
      await client.close();
    }
    // Without `operation:<name>:invoke` the caller is not shown the operation's tool.
    const { client: limited } = await connect(p.endpoint, reader);
    try {
      const names = (await limited.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('Order.get'));
      assert.ok(!names.includes('Order.approve') && !names.includes('operations.shout'), names.join(','));
    } finally {
      await limited.close();
    }
  });

  it('the exposure bindings list each operation per protocol with its descriptorHash (discovery descriptor, entity metadata)', async () => {
    const d = await p.admin.get('/api/ContractProjection/descriptor');
    expectStatus(d, 200);
    const data = d.body.data ?? d.body;
    const ids = new Map<string, any>(data.bindings.map((b: any) => [b.bindingId, b]));
    for (const cap of ['Entity.Order.approve', 'Operation.shout']) {
      for (const proto of ['rest', 'graphql', 'grpc', 'mcp']) {
        const b = ids.get(`${proto}:${cap}`);
        assert.ok(b !== undefined, `${proto}:${cap} is listed`);
        assert.match(b.descriptorHash, /^sha256:[0-9a-f]{64}$/);
      }
    }
    assert.equal(ids.get('grpc:Operation.shout').routeOrName, 'service.app.OperationService/Shout');
    assert.equal(ids.get('mcp:Entity.Order.approve').routeOrName, 'Order.approve');
    const op = data.operations.find((o: any) => o.operationId === 'Entity.Order.approve');
    assert.deepEqual([op.method, op.path, [...op.bindings].sort()], ['POST', '/orders/{id}/approve', ['graphql:Entity.Order.approve', 'grpc:Entity.Order.approve', 'mcp:Entity.Order.approve', 'rest:Entity.Order.approve']]);
    const meta = await p.admin.get('/api/Schema/entities/metadata/Order');
    expectStatus(meta, 200);
    assert.ok((meta.body.data ?? meta.body).bindings.some((b: any) => b.bindingId === 'graphql:Entity.Order.approve'));
  });

  const needsRoute = (t: { skip(message: string): void }): boolean => {
    if (by === 'route') return false;
    t.skip('POST /api/Schema/handlers is not on this branch yet: calls need the handlers route and the sandbox (issue 24)');
    return true;
  };

  it('GraphQL calls dispatch: the return value, JSON results, BRIDGE_ERROR and ACCESS_DENIED as errors with extensions', async (t) => {
    if (needsRoute(t)) return;
    const ok = await gql(p.admin, 'mutation($id: ID!) { approve(id: $id, input: { reason: "fine", rush: false }) { ok id reason } }', { id: orderId });
    assert.deepEqual(ok, { data: { approve: { ok: true, id: orderId, reason: 'fine' } } });
    assert.deepEqual((await gql(p.admin, 'mutation { shout(input: { text: "hi" }) }')).data, { shout: 'HI' });
    const boom = await gql(p.admin, 'mutation { boom(input: { n: 1 }) }');
    assert.deepEqual([boom.errors[0].extensions.code, boom.errors[0].extensions.reasonCode, boom.errors[0].message], ['BRIDGE_ERROR', 'Handler.Threw', 'kaboom']);
    const missing = await gql(p.admin, 'mutation($id: ID!) { approve(id: $id, input: { reason: "x" }) { ok } }', { id: randomUUID() });
    assert.equal(missing.errors[0].extensions.code, 'NOT_FOUND');
    const denied = await gql(p.admin.with({ token: reader }), 'mutation { shout(input: { text: "hi" }) }');
    assert.deepEqual([denied.errors[0].extensions.code, denied.errors[0].extensions.reasonCode], ['ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing']);
  });

  it('gRPC calls dispatch: { id, input } and the input as Structs, a non-object answer as { value }, BRIDGE_ERROR as INTERNAL / DEADLINE_EXCEEDED', async (t) => {
    if (needsRoute(t)) return;
    const pkg = loadProto(await fetchProto(p.admin));
    const md = metadata(server.adminToken, p.tenant, p.project);
    const orders = grpcOf('OrderService', pkg);
    const ops = grpcOf('OperationService', pkg);
    const ok = await unary(orders, 'Approve', structOf({ id: orderId, input: { reason: 'fine' } }), md);
    assert.equal(ok.error, null);
    assert.deepEqual(jsonOfStruct(ok.value), { ok: true, id: orderId, reason: 'fine' });
    const shout = await unary(ops, 'Shout', structOf({ text: 'hi' }), md);
    assert.deepEqual(jsonOfStruct(shout.value), { value: 'HI' });
    const boom = await unary(ops, 'Boom', structOf({ n: 1 }), md);
    assert.equal(boom.error?.code, grpc.status.INTERNAL);
    assert.deepEqual([serviceTrailers(boom.trailers).code, serviceTrailers(boom.trailers).reasonCode], ['BRIDGE_ERROR', 'Handler.Threw']);
    const spin = await unary(ops, 'Spin', structOf({ n: 1 }), md);
    assert.equal(spin.error?.code, grpc.status.DEADLINE_EXCEEDED);
    assert.equal(serviceTrailers(spin.trailers).reasonCode, 'Handler.CpuLimit');
    const denied = await unary(ops, 'Shout', structOf({ text: 'hi' }), metadata(reader, p.tenant, p.project));
    assert.equal(denied.error?.code, grpc.status.PERMISSION_DENIED);
    const noId = await unary(orders, 'Approve', structOf({ input: { reason: 'x' } }), md);
    assert.equal(noId.error?.code, grpc.status.INVALID_ARGUMENT);
  });

  it('MCP calls dispatch: structuredContent is { data: <return value> }; BRIDGE_ERROR → -32000, a missing grant → -32003', async (t) => {
    if (needsRoute(t)) return;
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const ok = await client.callTool({ name: 'Order.approve', arguments: { id: orderId, input: { reason: 'fine' } } });
      assert.deepEqual((ok.structuredContent as any).data, { ok: true, id: orderId, reason: 'fine' });
      const shout = await client.callTool({ name: 'operations.shout', arguments: { text: 'hi' } });
      assert.equal((shout.structuredContent as any).data, 'HI');
      const boom = await mcpErrorOf(client.callTool({ name: 'operations.boom', arguments: { n: 1 } }));
      assert.equal(boom.code, -32000);
      assert.deepEqual([(boom.data as any).serviceCode, (boom.data as any).reasonCode], ['BRIDGE_ERROR', 'Handler.Threw']);
      const bad = await mcpErrorOf(client.callTool({ name: 'Order.approve', arguments: { input: {} } }));
      assert.equal(bad.code, -32602, 'no id');
    } finally {
      await client.close();
    }
    const { client: limited } = await connect(p.endpoint, reader);
    try {
      const denied = await mcpErrorOf(limited.callTool({ name: 'operations.shout', arguments: { text: 'hi' } }));
      assert.equal(denied.code, -32003);
    } finally {
      await limited.close();
    }
  });
});
