/**
 * gRPC unary calls against a real node (CONTRACT: gRPC), with the stock
 * @grpc/grpc-js client and @grpc/proto-loader loading the served proto:
 * Get/List/Create/Update/Delete with REST's values, metadata authentication,
 * the status mapping with its trailing metadata, and REST's authority.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, fetchProto, isoOf, loadProto, metadata, serviceTrailers, timestampOf, unary } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }] };
const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'placedAt', type: 'DateTime', nullable: true },
    { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] },
    { name: 'qty', type: 'Int', nullable: true },
    { name: 'gift', type: 'Boolean', nullable: true },
    { name: 'meta', type: 'JSON', nullable: true },
    { name: 'code', type: 'String', nullable: true, unique: true },
    { name: 'customer', type: 'ID', nullable: true, references: 'Customer' },
  ],
};

forEachBackend('gRPC unary calls', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let project: string;
  let projectId: string;
  let orders: any;
  let customers: any;
  let md: grpc.Metadata;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ tenant, project, projectId } = p);
    admin = p.client;
    await defineEntity(admin, CUSTOMER);
    await defineEntity(admin, ORDER);
    const pkg = loadProto(await fetchProto(admin));
    orders = clientOf(pkg, 'OrderService', server.node.grpcPort);
    customers = clientOf(pkg, 'CustomerService', server.node.grpcPort);
    md = metadata(server.adminToken, tenant, project);
  });
  after(async () => {
    orders?.close();
    customers?.close();
    await server.close();
  });

  it('serves the proto at /grpc/proto/service-app.proto (also under /api) with CONTRACT\'s package, services and messages', async () => {
    const text = await fetchProto(admin);
    assert.match(text, /^syntax = "proto3";$/m);
    assert.match(text, /^package service\.app;$/m);
    for (const line of [
      'rpc Get(GetOrderRequest) returns (Order);', 'rpc List(ListOrdersRequest) returns (ListOrdersResponse);',
      'rpc StreamList(ListOrdersRequest) returns (stream Order);', 'rpc Watch(WatchOrdersRequest) returns (stream OrderChange);',
      'rpc BatchCreate(stream OrderInput) returns (BatchCreateOrdersResponse);', 'google.protobuf.FieldMask update_mask = 4;',
      'optional google.protobuf.Timestamp placed_at', 'string concurrency_token = 4;', 'service CustomerService {',
    ]) assert.ok(text.includes(line), line);
    for (const imp of text.match(/^import "([^"]+)";$/gm) ?? []) assert.match(imp, /"google\/protobuf\//);
    const api = await admin.get('/api/grpc/proto/service-app.proto');
    assert.equal(api.text, text);
    const anon = await admin.with({ token: null }).get('/grpc/proto/service-app.proto');
    assert.equal(anon.status, 401);
  });

  it('Create, Get, List, Update and Delete answer REST\'s rows with the CONTRACT\'s type mapping', async () => {
    const c = await unary(customers, 'Create', { customer: { email: `${randomUUID()}@example.com` } }, md);
    assert.equal(c.error, null);
    const placed = '2026-01-02T10:00:00.123456Z';
    const created = await unary(orders, 'Create', {
      order: { total: '12.50', status: 'paid', placed_at: timestampOf(placed), qty: 3, gift: false, customer: c.value.id, meta: { structValue: { fields: { a: { numberValue: 1 }, b: { listValue: { values: [{ stringValue: 'x' }, { boolValue: true }] } } } } } },
    }, md);
    assert.equal(created.error, null, created.error?.message);
    const o = created.value;
    const rest = (await admin.get(`/api/orders/${o.id}`)).body.data;
    assert.equal(o.total, '12.50');
    assert.equal(o.status, 'paid');
    assert.equal(o.qty, 3);
    assert.equal(o.gift, false, 'a set false optional bool is present');
    assert.equal(o.customer, c.value.id);
    assert.equal(isoOf(o.placed_at), rest.placedAt);
    assert.equal(rest.placedAt, placed);
    assert.deepEqual(rest.meta, { a: 1, b: ['x', true] });
    assert.equal(o.concurrency_token, rest.concurrencyToken);
    assert.equal(Date.parse(isoOf(o.created_at)!), Date.parse(rest.createdAt));
    assert.equal(o.code, undefined, 'a null field is absent');

    const got = await unary(orders, 'Get', { id: o.id }, md);
    assert.equal(got.error, null);
    assert.deepEqual(got.value, o);

    const list = await unary(orders, 'List', { page_size: 1, include_total: true, filter: JSON.stringify({ status: { eq: 'paid' } }), sort: '-total' }, md);
    assert.equal(list.error, null);
    assert.equal(list.value.items.length, 1);
    assert.equal(list.value.total_count, 1);
    assert.equal(list.value.next_page_token ?? '', '', 'the last page has no token');

    const upd = await unary(orders, 'Update', { id: o.id, order: { qty: 4 }, if_match: o.concurrency_token }, md);
    assert.equal(upd.error, null, upd.error?.message);
    assert.equal(upd.value.qty, 4);
    assert.equal(upd.value.total, '12.50', 'fields not set are unchanged');
    assert.notEqual(upd.value.concurrency_token, o.concurrency_token);

    // With a mask only the listed paths change; a listed path unset in `order` is cleared.
    const masked = await unary(orders, 'Update', { id: o.id, order: { total: '99.00', qty: 7 }, update_mask: { paths: ['qty', 'placed_at'] } }, md);
    assert.equal(masked.error, null, masked.error?.message);
    assert.equal(masked.value.qty, 7);
    assert.equal(masked.value.total, '12.50');
    assert.equal(masked.value.placed_at, undefined);
    assert.equal((await admin.get(`/api/orders/${o.id}`)).body.data.placedAt, null);

    const del = await unary(orders, 'Delete', { id: o.id }, md);
    assert.equal(del.error, null);
    assert.deepEqual({ id: del.value.id, deleted: del.value.deleted }, { id: o.id, deleted: true });
    expectStatus(await admin.get(`/api/orders/${o.id}`), 404);
  });

  it('pages with page_token in REST\'s order, and the rows equal REST\'s', async () => {
    for (let i = 0; i < 5; i++) expectStatus(await admin.post('/api/orders', { total: `${i}.25`, status: 'pending', qty: i }), 201);
    const seen: string[] = [];
    let token = '';
    for (;;) {
      const page = await unary(orders, 'List', { page_size: 2, page_token: token, sort: '-qty', filter: JSON.stringify({ status: { eq: 'pending' } }) }, md);
      assert.equal(page.error, null, page.error?.message);
      seen.push(...page.value.items.map((x: any) => x.id));
      token = page.value.next_page_token ?? '';
      if (token === '') break;
    }
    const rest = await admin.get(`/api/orders?sort=-qty&pageSize=200&filter=${encodeURIComponent(JSON.stringify({ status: { eq: 'pending' } }))}`);
    assert.deepEqual(seen, rest.body.data.map((x: any) => x.id));
    assert.equal(seen.length, 5);
  });

  it('maps errors by CONTRACT with x-service-code, x-service-reason-code and x-service-correlation-id trailers', async () => {
    const expectStatusOf = async (p: Promise<any>, status: number, code: string, reason?: RegExp) => {
      const r = await p;
      assert.ok(r.error !== null, 'the call fails');
      assert.equal(r.error.code, status, `${r.error.code} ${r.error.details}`);
      const t = serviceTrailers(r.trailers);
      assert.equal(t.code, code);
      if (reason !== undefined) assert.match(t.reasonCode, reason);
      assert.match(t.correlationId, /^[0-9a-f-]{36}$/);
      return t;
    };
    await expectStatusOf(unary(orders, 'Get', { id: randomUUID() }, metadata(null, tenant, project)), grpc.status.UNAUTHENTICATED, 'UNAUTHORIZED');
    await expectStatusOf(unary(orders, 'Get', { id: randomUUID() }, metadata('not-a-token', tenant, project)), grpc.status.UNAUTHENTICATED, 'UNAUTHORIZED');
    await expectStatusOf(unary(orders, 'Get', { id: randomUUID() }, md), grpc.status.NOT_FOUND, 'NOT_FOUND', /^Order\.NotFound$/);
    const code = `c-${randomUUID()}`;
    assert.equal((await unary(orders, 'Create', { order: { total: '1', status: 'paid', code } }, md)).error, null);
    await expectStatusOf(unary(orders, 'Create', { order: { total: '1', status: 'paid', code } }, md), grpc.status.ALREADY_EXISTS, 'CONFLICT', /UniqueViolation$/);
    const row = (await unary(orders, 'Create', { order: { total: '1', status: 'paid' } }, md)).value;
    await expectStatusOf(unary(orders, 'Update', { id: row.id, order: { qty: 1 }, if_match: 'stale-token' }, md), grpc.status.ABORTED, 'CONFLICT', /ConcurrencyTokenMismatch$/);
    await expectStatusOf(unary(orders, 'Create', { order: { total: 'twelve', status: 'paid' } }, md), grpc.status.INVALID_ARGUMENT, 'VALIDATION_FAILED', /^OrderValidation\./);
    await expectStatusOf(unary(orders, 'Create', { order: { total: '1' } }, md), grpc.status.INVALID_ARGUMENT, 'VALIDATION_FAILED', /Required$/);
    await expectStatusOf(unary(orders, 'List', { filter: '{not json' }, md), grpc.status.INVALID_ARGUMENT, 'VALIDATION_FAILED');
    await expectStatusOf(unary(orders, 'List', { page_size: 201 }, md), grpc.status.INVALID_ARGUMENT, 'VALIDATION_FAILED');
    // A row still referenced cannot be deleted (foreign-key restrict): FAILED_PRECONDITION.
    const cust = (await unary(customers, 'Create', { customer: { email: `${randomUUID()}@example.com` } }, md)).value;
    assert.equal((await unary(orders, 'Create', { order: { total: '1', status: 'paid', customer: cust.id } }, md)).error, null);
    await expectStatusOf(unary(customers, 'Delete', { id: cust.id }, md), grpc.status.FAILED_PRECONDITION, 'CONFLICT', /ReferencedByOtherRows$/);
    // Reusing an idempotency key with another body: FAILED_PRECONDITION too.
    const key = randomUUID();
    const first = await unary(orders, 'Create', { order: { total: '5', status: 'paid' }, idempotency_key: key }, md);
    const again = await unary(orders, 'Create', { order: { total: '5', status: 'paid' }, idempotency_key: key }, md);
    assert.equal(again.value.id, first.value.id, 'same key and body: the same row');
    await expectStatusOf(unary(orders, 'Create', { order: { total: '6', status: 'paid' }, idempotency_key: key }, md), grpc.status.FAILED_PRECONDITION, 'CONFLICT');
    // An oversize message is refused by its size before it is decoded.
    const big = await unary(orders, 'Create', { order: { total: '1', status: 'paid', code: 'x'.repeat(11 * 1024 * 1024) } }, md);
    assert.equal(big.error?.code, grpc.status.RESOURCE_EXHAUSTED);
    // A project without the entity: UNIMPLEMENTED.
    const other = await bootstrapProject(server.url, server.adminToken);
    await expectStatusOf(unary(orders, 'Get', { id: randomUUID() }, metadata(server.adminToken, other.tenant, other.project)), grpc.status.UNIMPLEMENTED, 'METHOD_NOT_ALLOWED', /^Route\.Unknown$/);
  });

  it('successful calls carry x-service-correlation-id, equal to the audit row\'s', async () => {
    const r = await unary(orders, 'List', { page_size: 1 }, md);
    assert.equal(r.error, null);
    const id = String(r.trailers?.get('x-service-correlation-id')[0] ?? '');
    assert.match(id, /^[0-9a-f-]{36}$/);
    const record = await explainRecord(admin, id, 'Entity.Order.List');
    assert.deepEqual([record.operationId, record.decision, record.protocol], ['Entity.Order.List', 'Allow', 'grpc']);
    // The usage event names the protocol, as a GraphQL call's does (usage is flushed in the background).
    let event: any;
    for (let i = 0; i < 100 && event === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      event = ((await admin.get(`/api/Usage/${projectId}/events`)).body?.data ?? []).find((e: any) => e.correlationId === id);
    }
    assert.ok(event !== undefined, 'the usage event arrives');
    assert.deepEqual([event.kind, event.quantity, event.operationId, event.dimensions], ['read.monthly', 1, 'Entity.Order.List', { entity: 'Order', protocol: 'grpc' }]);
  });

  it('lists a GrpcMethod binding per method with its REST twin\'s grant set and a deterministic descriptorHash', async () => {
    const read = async () => (await admin.get('/api/Schema/entities/metadata/Order')).body.data;
    const meta = await read();
    const grpcBindings = meta.bindings.filter((b: any) => b.protocolKind === 'Grpc');
    assert.deepEqual(grpcBindings.map((b: any) => [b.bindingId, b.exposureShape, b.routeOrName]), [
      ['grpc:Entity.Order.Read', 'GrpcMethod', 'service.app.OrderService/Get'],
      ['grpc:Entity.Order.List', 'GrpcMethod', 'service.app.OrderService/List'],
      ['grpc:Entity.Order.Create', 'GrpcMethod', 'service.app.OrderService/Create'],
      ['grpc:Entity.Order.Update', 'GrpcMethod', 'service.app.OrderService/Update'],
      ['grpc:Entity.Order.Delete', 'GrpcMethod', 'service.app.OrderService/Delete'],
      ['grpc:Entity.Order.List.Stream', 'GrpcMethod', 'service.app.OrderService/StreamList'],
      ['grpc:Entity.Order.BatchCreate', 'GrpcMethod', 'service.app.OrderService/BatchCreate'],
      ['grpc:Entity.Order.Subscribe', 'GrpcMethod', 'service.app.OrderService/Watch'],
    ]);
    const rest = new Map<string, any>(meta.bindings.filter((b: any) => b.protocolKind === 'Rest').map((b: any) => [b.capabilityId, b]));
    for (const b of grpcBindings) {
      assert.deepEqual(b.requiredGrantSet, rest.get(b.capabilityId)?.requiredGrantSet ?? ['entity:Order:read'], b.bindingId);
      assert.match(b.descriptorHash, /^sha256:[0-9a-f]{64}$/);
    }
    assert.deepEqual((await read()).bindings, meta.bindings, 'the same publication yields the same bindings');
  });

  it('authority is REST\'s: a read-only user reads, Create is PERMISSION_DENIED with RequiredGrantMissing; a token of another project is UNAUTHENTICATED', async () => {
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read' }), 201);
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    const user = metadata(login.body.accessToken, tenant, project);
    const read = await unary(orders, 'List', { page_size: 1 }, user);
    assert.equal(read.error, null, read.error?.message);
    const denied = await unary(orders, 'Create', { order: { total: '1', status: 'paid' } }, user);
    assert.equal(denied.error?.code, grpc.status.PERMISSION_DENIED);
    const t = serviceTrailers(denied.trailers);
    assert.deepEqual([t.code, t.reasonCode], ['ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing']);
    const record = await explainRecord(admin, t.correlationId, 'Entity.Order.Create');
    assert.deepEqual([record.decision, record.reasonCode, record.protocol], ['Deny', 'ExposureBinding.RequiredGrantMissing', 'grpc']);
    assert.equal(record.bindingId, 'grpc:Entity.Order.Create', 'the refusal names the gRPC binding');
    const cust = await unary(customers, 'List', {}, user);
    assert.equal(cust.error?.code, grpc.status.PERMISSION_DENIED);
    const other = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(other.client, ORDER_ONLY);
    const cross = await unary(orders, 'List', {}, metadata(login.body.accessToken, other.tenant, other.project));
    assert.equal(cross.error?.code, grpc.status.UNAUTHENTICATED);
  });
});

/** The explain record of a correlationId (audit is flushed in the background). */
async function explainRecord(client: Client, correlationId: string, operationId: string): Promise<any> {
  let record: any;
  for (let i = 0; i < 60 && record?.operationId !== operationId; i++) {
    await new Promise((r) => setTimeout(r, 50));
    record = (await client.get(`/api/Explainability/access?correlationId=${encodeURIComponent(correlationId)}`)).body?.data;
  }
  return record;
}

const ORDER_ONLY = { entityName: 'Order', fields: [{ name: 'total', type: 'Decimal', nullable: false }] };
