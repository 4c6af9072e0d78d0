/**
 * Bad input over POST /graphql: random documents (valid pieces in random
 * order, truncated, garbage), random variables against typed variables,
 * random filters, page arguments and cursors, bodies that are not the
 * `{ query }` object. Every answer: never 5xx, GraphQL's shape, every error
 * with `extensions { code, reasonCode, correlationId }` equal to the
 * correlation header, and nothing written by a mutation that failed.
 *
 * Seeded: GRAPHQL_BAD_INPUT_SEED=<n> reproduces a run.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fuzzJsonValue, fuzzString } from '../support/unstorable-text.js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const SEED = Number(process.env.GRAPHQL_BAD_INPUT_SEED ?? 20_261_124);
const CODES = new Set(['VALIDATION_FAILED', 'UNAUTHORIZED', 'ACCESS_DENIED', 'NOT_FOUND', 'CONFLICT', 'PAYLOAD_TOO_LARGE']);

const PIECES = [
  '{', '}', '(', ')', '[', ']', ':', '!', '$', '...', '@include(if: true)', '@skip(if: $b)', 'query', 'mutation', 'subscription', 'fragment F on Order',
  'orders', 'order', 'customers', 'customer', 'createOrder', 'updateOrder', 'deleteOrder', 'edges', 'node', 'cursor', 'pageInfo', 'totalCount',
  'id', 'total', 'status', 'email', 'tier', 'first: 2', 'last: 1', 'first: -1', 'first: 999', 'after: "x"', 'before: "eyJoIjoiIn0"',
  'filter: { status: { eq: PAID } }', 'filter: { total: { gt: "abc" } }', 'filter: { customer: { email: { like: "%" } } }', 'filter: { not: {} }',
  'sort: [{ field: TOTAL, direction: DESC }]', 'id: "00000000-0000-0000-0000-000000000000"', 'id: 1', 'input: { total: "1" }', 'input: {}',
  '"\\u0000"', '"unterminated', '1e999', 'null', 'true', '__typename', '__schema { types { name } }', '#comment\n', ',', '\u00e9', '\ud83d\ude00',
];

const documentArb = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 30 }).map((p) => p.join(' ')),
  fuzzString({ maxLength: 200 }),
  fc.constantFrom(
    'query($n: Int!) { orders(first: $n) { totalCount } }',
    'query($f: OrderFilter) { orders(filter: $f) { edges { node { id total } } } }',
    'query($id: ID!) { order(id: $id) { id customer { email } } }',
    'mutation($in: OrderCreateInput!) { createOrder(input: $in) { id } }',
    'mutation($id: ID!, $in: OrderUpdateInput!) { updateOrder(id: $id, input: $in) { id } }',
    'query A { customers { totalCount } } query B { orders { totalCount } }',
  ),
);

const jsonValueArb = fuzzJsonValue({ maxDepth: 4 });
const variablesArb = fc.oneof(
  fc.constant(undefined),
  fc.record({ n: fc.oneof(fc.integer({ min: -5, max: 500 }), fuzzString(), fc.constant(null)) }, { requiredKeys: [] }),
  fc.record({ f: jsonValueArb }),
  fc.record({ id: fc.oneof(fc.uuid(), fuzzString(), fc.integer()), in: jsonValueArb }),
  fc.record({ in: fc.record({ total: fc.oneof(fuzzString(), fc.double(), fc.constant('12.50')), status: fc.constantFrom('PAID', 'paid', 'NOPE', 1), customer: fc.oneof(fc.uuid(), fuzzString()) }, { requiredKeys: [] }) }),
  jsonValueArb,
);

const bodyArb = fc.oneof(
  fc.record({ query: documentArb, variables: variablesArb, operationName: fc.option(fc.constantFrom('A', 'B', 'C', ''), { nil: undefined }) }, { requiredKeys: ['query'] }),
  jsonValueArb,
  fuzzString({ maxLength: 100 }).map((s) => ({ raw: s })),
);

forEachBackend('GraphQL bad input', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }, { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'] }] });
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'total', type: 'Decimal', nullable: false }, { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] }, { name: 'customer', type: 'ID', nullable: true, references: 'Customer' }] });
  });
  after(async () => { await server.close(); });

  it('never a 5xx; every error in GraphQL\'s shape with code, reasonCode and the request\'s correlationId; failed writes write nothing', async () => {
    let runs = 0;
    let written = 0;
    const tally = new Map<string, number>();
    await fc.assert(fc.asyncProperty(bodyArb, async (body) => {
      runs++;
      const raw = typeof body === 'object' && body !== null && 'raw' in body ? (body as { raw: string }).raw : JSON.stringify(body);
      const r = await admin.post('/graphql', raw, { 'content-type': 'application/json' });
      const what = `body ${raw.slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`;
      assert.ok([200, 400].includes(r.status), what);
      const correlationId = r.headers.get('x-service-correlation-id');
      assert.ok(typeof r.body === 'object' && r.body !== null, what);
      for (const e of r.body.errors ?? []) {
        assert.equal(typeof e.message, 'string', what);
        assert.ok(CODES.has(e.extensions?.code), `unexpected code: ${what}`);
        assert.equal(typeof e.extensions.reasonCode, 'string', what);
        assert.equal(e.extensions.correlationId, correlationId, what);
        tally.set(e.extensions.reasonCode, (tally.get(e.extensions.reasonCode) ?? 0) + 1);
      }
      if (r.status === 400) assert.equal(r.body.data, undefined, what);
      if (r.body.data?.createOrder?.id !== undefined) written++;
    }), { seed: SEED, numRuns: 300 });
    // What was written is exactly what succeeded.
    const count = await admin.post('/graphql', { query: '{ orders { totalCount } }' });
    assert.equal(count.body.data.orders.totalCount, written);
    console.log(`# [graphql bad input] ${runs} bodies (seed ${SEED}); successful creates ${written}; reason codes ${[...tally].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}×${v}`).join(' ')}`);
    assert.ok(tally.size >= 5, 'the generator reaches several kinds of refusal');
  });
});
