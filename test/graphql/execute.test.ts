/**
 * POST /graphql over real HTTP (CONTRACT: GraphQL): queries planned to one
 * SQL statement per root field, mutations through the REST operations,
 * errors with the envelope's extensions, document limits, and REST's
 * authority for a granted user.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'], default: 'free' },
    { name: 'secret', type: 'String', nullable: true },
  ],
};
const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'placedAt', type: 'DateTime', nullable: true },
    { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] },
    { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
  ],
};

interface GqlReply {
  status: number;
  body: { data?: any; errors?: Array<{ message: string; path?: Array<string | number>; extensions: { code: string; reasonCode: string; correlationId: string } }> };
  correlationId: string | null;
}

async function gql(client: Client, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}, path = '/graphql'): Promise<GqlReply> {
  const r = await client.post(path, { query, ...(variables === undefined ? {} : { variables }) }, headers);
  return { status: r.status, body: r.body, correlationId: r.headers.get('x-service-correlation-id') };
}

const firstError = (r: GqlReply) => {
  assert.ok(r.body.errors !== undefined && r.body.errors.length > 0, `expected errors, got ${JSON.stringify(r.body)}`);
  const e = r.body.errors[0]!;
  assert.equal(e.extensions.correlationId, r.correlationId, 'one correlationId per HTTP request, equal to the header');
  return e;
};

const noErrors = (r: GqlReply): any => {
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data;
};

forEachBackend('GraphQL execution', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  const customers: Array<{ id: string; email: string }> = [];
  const orders: string[] = [];

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    await defineEntity(admin, CUSTOMER);
    await defineEntity(admin, ORDER);
    for (let i = 0; i < 3; i++) {
      const c = await admin.post('/api/customers', { email: `c${i}@example.com`, tier: i === 0 ? 'pro' : 'free', secret: `s${i}` });
      expectStatus(c, 201);
      customers.push({ id: c.body.data.id, email: c.body.data.email });
    }
    for (let i = 0; i < 7; i++) {
      const o = await admin.post('/api/orders', { total: `${10 + i}.50`, status: i % 2 === 0 ? 'paid' : 'pending', customer: customers[i % 3]!.id, placedAt: i === 3 ? null : `2026-01-0${i + 1}T10:00:00.123456Z` });
      expectStatus(o, 201);
      orders.push(o.body.data.id);
    }
  });
  after(async () => { await server.close(); });

  it('a list with a nested toOne row and a toMany connection answers REST\'s values (Decimal strings, DateTime precision, enums upper-cased)', async () => {
    const r = await gql(admin, `query Q($n: Int) {
      orders(first: $n, sort: [{ field: TOTAL, direction: DESC }]) {
        totalCount
        pageInfo { hasNextPage hasPreviousPage endCursor }
        edges { cursor node { id total placedAt status customer { email tier orders(first: 1) { totalCount edges { node { id } } } } } }
      }
    }`, { n: 3 });
    const data = noErrors(r);
    const rest = await admin.get('/api/orders?sort=-total&pageSize=3&include=customer');
    const conn = data.orders;
    assert.equal(conn.totalCount, 7);
    assert.equal(conn.pageInfo.hasNextPage, true);
    assert.equal(conn.pageInfo.hasPreviousPage, false);
    assert.equal(conn.edges.length, 3);
    conn.edges.forEach((e: any, i: number) => {
      const row = rest.body.data[i];
      assert.equal(e.node.id, row.id);
      assert.equal(e.node.total, row.total);
      assert.equal(typeof e.node.total, 'string');
      assert.equal(e.node.placedAt, row.placedAt);
      assert.equal(e.node.status, row.status.toUpperCase());
      assert.equal(e.node.customer.email, row.customer.email);
      assert.equal(e.node.customer.tier, row.customer.tier.toUpperCase());
      assert.ok(e.node.customer.orders.totalCount >= 2);
      assert.equal(e.node.customer.orders.edges.length, 1);
    });
    assert.equal(conn.pageInfo.endCursor, conn.edges[2].cursor);
  });

  it('pages forward with first/after and backward with last/before, without a gap or a repeat', async () => {
    const all = noErrors(await gql(admin, '{ orders(first: 200) { edges { node { id } } } }')).orders.edges.map((e: any) => e.node.id);
    assert.equal(all.length, 7);
    const forward: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: any = noErrors(await gql(admin, 'query($a: String) { orders(first: 2, after: $a) { pageInfo { hasNextPage endCursor } edges { node { id } } } }', { a: after })).orders;
      forward.push(...page.edges.map((e: any) => e.node.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    assert.deepEqual(forward, all);
    const backward: string[] = [];
    let before: string | null = null;
    for (;;) {
      const page: any = noErrors(await gql(admin, 'query($b: String) { orders(last: 3, before: $b) { pageInfo { hasPreviousPage startCursor } edges { node { id } } } }', { b: before })).orders;
      backward.unshift(...page.edges.map((e: any) => e.node.id));
      if (!page.pageInfo.hasPreviousPage) break;
      before = page.pageInfo.startCursor;
    }
    assert.deepEqual(backward, all);
    const tooMany = await gql(admin, '{ orders(first: 201) { totalCount } }');
    const e = firstError(tooMany);
    assert.equal(e.extensions.code, 'VALIDATION_FAILED');
    assert.equal(tooMany.body.data, null, 'orders is non-null: its failure nulls data');
    const wrongCursor = firstError(await gql(admin, `{ orders(after: "${Buffer.from('{}').toString('base64url')}") { totalCount } }`));
    assert.equal(wrongCursor.extensions.reasonCode, 'Query.InvalidCursor');
  });

  it('one row by id (null when missing), aliases, fragments and @include', async () => {
    const r = noErrors(await gql(admin, `query($id: ID!, $missing: ID!, $withTier: Boolean!) {
      a: customer(id: $id) { ...C }
      b: customer(id: $missing) { id }
      c: customer(id: "not-a-uuid") { id }
    }
    fragment C on Customer { email t: tier @include(if: $withTier) first: orders(first: 1) { totalCount } two: orders(first: 2) { edges { node { id } } } }`, { id: customers[0]!.id, missing: randomUUID(), withTier: true }));
    assert.equal(r.a.email, 'c0@example.com');
    assert.equal(r.a.t, 'PRO');
    assert.equal(r.a.first.totalCount, 3);
    assert.equal(r.a.two.edges.length, 2);
    assert.equal(r.b, null);
    assert.equal(r.c, null);
  });

  it('filters with operators, and/or/not and a nested relation filter', async () => {
    const r = noErrors(await gql(admin, `{
      paid: orders(filter: { status: { eq: PAID } }) { totalCount }
      big: orders(filter: { total: { gt: "14" }, not: { status: { in: [PENDING] } } }) { totalCount }
      pro: orders(filter: { customer: { tier: { eq: PRO } } }) { totalCount }
      either: orders(filter: { or: [{ placedAt: { isNull: true } }, { total: { lt: 11 } }] }) { totalCount }
    }`));
    assert.deepEqual([r.paid.totalCount, r.big.totalCount, r.pro.totalCount, r.either.totalCount], [4, 2, 3, 2]);
  });

  it('mutations: create (Idempotency-Key replays), update with ifMatch (PATCH), delete; a missing row is NOT_FOUND', async () => {
    const key = `gql-${randomUUID()}`;
    const create = 'mutation($in: OrderCreateInput!) { createOrder(input: $in) { id total status concurrencyToken customer { email } } }';
    const input = { total: '99.99', status: 'PENDING', customer: customers[1]!.id };
    const one = noErrors(await gql(admin, create, { in: input }, { 'Idempotency-Key': key })).createOrder;
    const again = noErrors(await gql(admin, create, { in: input }, { 'Idempotency-Key': key })).createOrder;
    assert.equal(again.id, one.id, 'the same key answers the first write');
    assert.equal(one.total, '99.99');
    assert.equal(one.status, 'PENDING');
    assert.equal(one.customer.email, 'c1@example.com');
    const stale = await gql(admin, 'mutation($id: ID!) { updateOrder(id: $id, input: { status: PAID }, ifMatch: "00000000-0000-0000-0000-000000000000") { id } }', { id: one.id });
    assert.equal(firstError(stale).extensions.code, 'CONFLICT');
    assert.equal(stale.body.data, null, 'a failed non-null root field nulls data');
    const updated = noErrors(await gql(admin, 'mutation($id: ID!, $t: String) { updateOrder(id: $id, input: { status: PAID }, ifMatch: $t) { status total } }', { id: one.id, t: one.concurrencyToken })).updateOrder;
    assert.deepEqual(updated, { status: 'PAID', total: '99.99' });
    const del = noErrors(await gql(admin, 'mutation($id: ID!) { deleteOrder(id: $id) { id deleted } }', { id: one.id })).deleteOrder;
    assert.deepEqual(del, { id: one.id, deleted: true });
    const gone = firstError(await gql(admin, 'mutation($id: ID!) { deleteOrder(id: $id) { id } }', { id: one.id }));
    assert.equal(gone.extensions.code, 'NOT_FOUND');
    assert.equal((await admin.get(`/api/orders/${one.id}`)).status, 404);
  });

  it('the same answers at /api/graphql and /v1/graphql', async () => {
    for (const path of ['/api/graphql', '/v1/graphql']) {
      assert.equal(noErrors(await gql(admin, '{ customers { totalCount } }', undefined, {}, path)).customers.totalCount, 3);
    }
  });

  it('document errors are VALIDATION_FAILED before anything runs: syntax, unknown field, variables, depth, complexity (counts priced), subscription over HTTP', async () => {
    const cases: Array<[string, Record<string, unknown> | undefined, string]> = [
      ['{ orders { ', undefined, 'GraphQL.SyntaxError'],
      ['{ orders { nope } }', undefined, 'GraphQL.InvalidDocument'],
      ['query($n: Int!) { orders(first: $n) { totalCount } }', { n: 'x' }, 'GraphQL.InvalidVariables'],
      [`{ customers { edges { node { orders { edges { node { customer { orders { edges { node { customer { orders { edges { node { id } } } } } } } } } } } } } } }`, undefined, 'GraphQL.DepthExceeded'],
      ['{ customers(first: 200) { edges { node { orders(first: 200) { totalCount } } } } }', undefined, 'GraphQL.ComplexityExceeded'],
      // 301 points when a count cost 1 and a page of 0 cost nothing; each count is priced as 100 rows, a page of 0 as 1 (docs/graphql.md).
      ['{ customers(first: 100) { edges { node { orders(first: 0) { totalCount } } } } }', undefined, 'GraphQL.ComplexityExceeded'],
      ['subscription { orderChanged { kind } }', undefined, 'GraphQL.SubscriptionOverHttp'],
    ];
    for (const [query, variables, reasonCode] of cases) {
      const r = await gql(admin, query, variables);
      assert.equal(r.status, 400, query);
      const e = firstError(r);
      assert.deepEqual([e.extensions.code, e.extensions.reasonCode], ['VALIDATION_FAILED', reasonCode], query);
      assert.equal(r.body.data, undefined);
    }
    // Introspection is exempt from the depth limit (graphql-js's own query is deeper than 12).
    const intro = noErrors(await gql(admin, '{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name ofType { name } } } } } } } } }'));
    assert.ok(intro.__schema.types.some((t: any) => t.name === 'OrderConnection'));
    const badBody = await admin.post('/graphql', '{"query": ', { 'content-type': 'application/json' });
    assert.equal(badBody.status, 400);
    assert.equal(badBody.body.errors[0].extensions.code, 'VALIDATION_FAILED');
    const noQuery = await admin.post('/graphql', { variables: {} });
    assert.equal(noQuery.body.errors[0].extensions.reasonCode, 'GraphQL.InvalidRequest');
  });

  it('a request without a valid token: 401 with UNAUTHORIZED in errors[0]', async () => {
    for (const token of [null, 'not-a-token']) {
      const r = await gql(admin.with({ token }), '{ orders { totalCount } }');
      assert.equal(r.status, 401);
      assert.equal(firstError(r).extensions.code, 'UNAUTHORIZED');
    }
  });

  it('usage events of a root field name the protocol: read.monthly with dimensions { entity, protocol: graphql }', async () => {
    const r = await gql(admin, '{ orders(first: 1) { totalCount } }');
    noErrors(r);
    let event: any;
    for (let i = 0; i < 100 && event === undefined; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const events = await admin.get(`/api/Usage/${projectId}/events?pageSize=200`);
      event = (events.body?.data ?? []).find((e: any) => e.correlationId === r.correlationId);
    }
    assert.ok(event !== undefined, 'the usage event arrives');
    assert.deepEqual([event.kind, event.quantity, event.operationId, event.dimensions], ['read.monthly', 1, 'Entity.Order.List', { entity: 'Order', protocol: 'graphql' }]);
  });

  it('authority is REST\'s: a read-only user reads (masked fields null), createOrder is ACCESS_DENIED with RequiredGrantMissing', async () => {
    for (const body of [
      { role: 'authenticated', grant: 'entity:Order:read' },
      { role: 'authenticated', grant: 'entity:Customer:read', fields: ['email', 'tier'] },
    ]) expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, body), 201);
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    const user = anon.with({ token: login.body.accessToken });
    const read = noErrors(await gql(user, '{ orders(first: 1) { totalCount edges { node { id customer { email secret } } } } }'));
    assert.equal(read.orders.totalCount, 7);
    assert.equal(read.orders.edges[0].node.customer.secret, null, 'a masked field answers null');
    assert.match(read.orders.edges[0].node.customer.email, /@example\.com$/);
    const denied = await gql(user, 'mutation { createOrder(input: { total: "1", status: PAID, customer: "00000000-0000-0000-0000-000000000000" }) { id } }');
    assert.equal(denied.status, 200);
    const e = firstError(denied);
    assert.deepEqual([e.extensions.code, e.extensions.reasonCode], ['ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing']);
    assert.deepEqual(e.path, ['createOrder']);
    // The explain record of the request is the root field's decision, recorded as a GraphQL call (audit is flushed in the background).
    let record: any;
    for (let i = 0; i < 50 && record?.operationId !== 'Entity.Order.Create'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      record = (await user.get(`/api/Explainability/access?correlationId=${encodeURIComponent(e.extensions.correlationId)}`)).body?.data;
    }
    assert.deepEqual([record.operationId, record.decision, record.reasonCode, record.protocol], ['Entity.Order.Create', 'Deny', 'ExposureBinding.RequiredGrantMissing', 'graphql']);
    assert.equal(record.bindingId, 'graphql:Entity.Order.Create', 'the refusal names the GraphQL binding');
    // Without the Customer grant, following order.customer is refused like REST's include=customer.
    const rest = await user.get('/api/orders?include=customer');
    expectStatus(rest, 200);
  });
});
