/**
 * Differential: for a set of filters, sorts and page sizes, GraphQL answers
 * the same rows in the same order with the same values as the REST list,
 * and the same denials with the same reason codes (issue 12).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const ENUM_FIELDS = new Set(['status', 'tier']);
const FIELDS = ['id', 'total', 'qty', 'placedAt', 'status', 'note', 'createdAt', 'updatedAt', 'concurrencyToken'];

/** The REST filter as a GraphQL variable: enum values by their GraphQL names (`paid` → `PAID`). */
function toGraphQLFilter(f: unknown, key = ''): unknown {
  if (Array.isArray(f)) return f.map((x) => toGraphQLFilter(x, key));
  if (typeof f === 'object' && f !== null) return Object.fromEntries(Object.entries(f).map(([k, v]) => [k, toGraphQLFilter(v, ENUM_FIELDS.has(k) ? k : ['eq', 'ne', 'in', 'gt', 'lt', 'between'].includes(k) ? key : '')]));
  return typeof f === 'string' && ENUM_FIELDS.has(key) ? f.toUpperCase() : f;
}

const toGraphQLSort = (sort: string): Array<{ field: string; direction: string }> =>
  sort.split(',').map((k) => ({ field: k.replace(/^-/, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase(), direction: k.startsWith('-') ? 'DESC' : 'ASC' }));

const QUERY = `query($f: OrderFilter, $n: Int, $a: String, $s: [OrderSort!]) {
  orders(filter: $f, first: $n, after: $a, sort: $s) { totalCount pageInfo { hasNextPage endCursor } edges { node { ${FIELDS.join(' ')} } } }
}`;

forEachBackend('GraphQL ⇄ REST differential', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }, { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'] }] });
    await defineEntity(admin, {
      entityName: 'Order',
      fields: [
        { name: 'total', type: 'Decimal', nullable: true },
        { name: 'qty', type: 'Int', nullable: true },
        { name: 'placedAt', type: 'DateTime', nullable: true },
        { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid', 'void'] },
        { name: 'note', type: 'String', nullable: true },
        { name: 'customer', type: 'ID', nullable: true, references: 'Customer' },
      ],
    });
    const customers: string[] = [];
    for (let i = 0; i < 3; i++) customers.push((await admin.post('/api/customers', { email: `d${i}@example.com`, tier: i === 0 ? 'pro' : 'free' })).body.data.id);
    // Duplicated sort values and nulls, so ties and NULL ordering are exercised.
    const rows = Array.from({ length: 40 }, (_, i) => ({
      total: i % 5 === 0 ? null : `${(i * 7) % 13}.${i % 10}0`,
      qty: i % 4,
      placedAt: i % 6 === 0 ? null : `2026-0${1 + (i % 3)}-1${i % 10}T0${i % 10}:00:00.${String(i).padStart(6, '0')}Z`,
      status: ['pending', 'paid', 'void'][i % 3],
      note: i % 3 === 0 ? null : `note ${i % 7}`,
      customer: i % 4 === 0 ? null : customers[i % 3],
    }));
    expectStatus(await admin.post('/api/orders/batch', { items: rows }), 201);
  });
  after(async () => { await server.close(); });

  const FILTERS: unknown[] = [
    null,
    { status: { eq: 'paid' } },
    { status: { in: ['paid', 'void'] }, qty: { gt: 1 } },
    { total: { between: ['2', '9.5'] } },
    { or: [{ total: { isNull: true } }, { note: { like: 'note 1%' } }] },
    { not: { placedAt: { isNull: true } }, qty: { lt: 3 } },
    { customer: { tier: { eq: 'pro' } } },
    { customer: { id: { isNull: false } }, status: { ne: 'void' } },
  ];
  const SORTS = ['createdAt', '-total', 'placedAt,-qty', 'status,note', '-updatedAt'];
  const SIZES = [1, 7, 50];

  it('same rows, order and values as the REST list, page by page', async () => {
    let compared = 0;
    for (const filter of FILTERS) {
      for (const sort of SORTS) {
        for (const size of SIZES) {
          const q = new URLSearchParams({ sort, pageSize: String(size), includeTotal: 'true' });
          if (filter !== null) q.set('filter', JSON.stringify(filter));
          const rest: any[] = [];
          let total = -1;
          for (let url = `/api/orders?${q}`; ;) {
            const r = await admin.get(url);
            expectStatus(r, 200);
            rest.push(...r.body.data);
            total = r.body.page.totalCount ?? total;
            if (r.body.page.next === undefined) break;
            url = `/api/orders?${new URLSearchParams({ sort, pageSize: String(size), cursor: r.body.page.next, ...(filter === null ? {} : { filter: JSON.stringify(filter) }) })}`;
          }
          const graph: any[] = [];
          let after: string | null = null;
          let gtotal = -1;
          for (;;) {
            const r: { body: any } = await admin.post('/graphql', { query: QUERY, variables: { f: toGraphQLFilter(filter), n: size, a: after, s: toGraphQLSort(sort) } });
            assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
            const page = r.body.data.orders;
            graph.push(...page.edges.map((e: any) => e.node));
            gtotal = page.totalCount;
            if (!page.pageInfo.hasNextPage) break;
            after = page.pageInfo.endCursor;
          }
          const what = `filter ${JSON.stringify(filter)} sort ${sort} size ${size}`;
          assert.equal(gtotal, total, `totalCount, ${what}`);
          assert.equal(graph.length, rest.length, `row count, ${what}`);
          graph.forEach((g, i) => {
            const r = rest[i];
            for (const f of FIELDS) assert.deepEqual(f === 'status' ? g[f].toLowerCase() : g[f], r[f], `${f} of row ${i}, ${what}`);
          });
          compared++;
        }
      }
    }
    assert.equal(compared, FILTERS.length * SORTS.length * SIZES.length);
  });

  it('the same denials with the same reason codes', async () => {
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read', fields: ['status', 'qty', 'customer'] }), 201);
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const user = anon.with({ token: (await anon.post('/api/identity/login', { email, password: 'long enough pw' })).body.accessToken });
    const cases: Array<{ filter: unknown; sort: string }> = [
      { filter: { customer: { tier: { eq: 'pro' } } }, sort: 'createdAt' }, // reaches Customer: no grant
      { filter: { total: { gt: '1' } }, sort: 'createdAt' }, // a masked field in the filter
      { filter: null, sort: '-note' }, // a masked field in the sort
      { filter: { qty: { in: [] } }, sort: 'createdAt' }, // invalid value
    ];
    for (const c of cases) {
      const q = new URLSearchParams({ sort: c.sort });
      if (c.filter !== null) q.set('filter', JSON.stringify(c.filter));
      const rest = await user.get(`/api/orders?${q}`);
      assert.ok(rest.status >= 400, `REST refuses ${JSON.stringify(c)}: ${rest.status}`);
      const g = await user.post('/graphql', { query: QUERY, variables: { f: toGraphQLFilter(c.filter), s: toGraphQLSort(c.sort) } });
      const e = g.body.errors?.[0];
      assert.ok(e !== undefined, `GraphQL refuses ${JSON.stringify(c)}`);
      assert.deepEqual([e.extensions.code, e.extensions.reasonCode], [rest.body.error.code, rest.body.error.reasonCode], JSON.stringify(c));
    }
    // And what the grant allows reads the same through both.
    const rest = await user.get('/api/orders?sort=qty&pageSize=5&fields=status,qty');
    const g = await user.post('/graphql', { query: '{ orders(first: 5, sort: [{ field: QTY }]) { edges { node { id status qty total } } } }' });
    assert.deepEqual(g.body.data.orders.edges.map((e: any) => [e.node.id, e.node.status.toLowerCase(), e.node.qty, e.node.total]), rest.body.data.map((r: any) => [r.id, r.status, r.qty, null]));
  });
});
