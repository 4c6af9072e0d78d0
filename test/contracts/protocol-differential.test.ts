/**
 * One differential suite across protocols (issue 13; CONTRACT: Across
 * protocols): on one data set, REST (the reference), GraphQL, MCP and gRPC
 * answer the same rows in the same order with the same values (after each
 * protocol's type mapping, test/support/protocols.ts) for 120 list queries
 * (filters, nested relation filters, sorts, page sizes, cursors, totals),
 * page by page, and refuse the same denied or invalid actions with the same
 * code and reasonCode. A code one protocol cannot express fails the build
 * (runtime/errors/codes.ts maps every code per protocol).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { grpcProtocol } from '../support/grpc-protocol.js';
import { GRAPHQL_NULL, graphqlProtocol, isRefusal, mcpProtocol, restProtocol, type Answer, type ListCall, type Page, type Protocol, type Row } from '../support/protocols.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const FIELDS = ['id', 'total', 'qty', 'placedAt', 'status', 'note', 'customer', 'createdAt', 'updatedAt', 'concurrencyToken'];
/** What the read-only user may see (its grant masks `total`, `note` and `placedAt`; without a Customer grant GraphQL cannot follow `customer`). */
const USER_FIELDS = ['id', 'status', 'qty'];
const REFERENCES = new Set(['customer']);

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

/** Every page of a list through one protocol, following its own cursors. */
async function allPages(p: Protocol, c: ListCall): Promise<Answer<{ rows: Row[]; total: number | null; pages: number }>> {
  const rows: Row[] = [];
  let total: number | null = null;
  let cursor: string | null = null;
  for (let pages = 1; ; pages++) {
    const page: Answer<Page> = await p.list({ ...c, cursor });
    if (isRefusal(page)) return page;
    rows.push(...page.rows);
    total ??= page.total;
    if (page.next === null) return { rows, total, pages };
    assert.ok(pages < 1000, `${p.name}: paging does not end`);
    cursor = page.next;
  }
}

/** An instant as one text whatever the protocol's spelling of it (`…00.00001Z`, `…00.000010Z`): ISO seconds and six digits of fraction. */
const INSTANT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;
const canonical = (v: unknown): unknown => {
  const m = typeof v === 'string' ? INSTANT.exec(v) : null;
  return m === null ? v : `${m[1]}.${(m[2] ?? '').padEnd(6, '0').slice(0, 6)}Z`;
};

/** The compared fields of a row, instants in one spelling, absent values as null. */
const pick = (row: Row, fields: readonly string[]): Row => Object.fromEntries(fields.map((f) => [f, canonical(row[f] ?? null)]));

forEachBackend('protocol differential: REST, GraphQL, MCP, gRPC', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let endpoint: string;
  const opened: Protocol[] = [];
  /** The admin through every protocol, REST first. */
  let asAdmin: Protocol[];
  /** The read-only user through every protocol, REST first. */
  let asUser: Protocol[];
  let someOrder: Row;

  const open = async (token: string, fields: readonly string[]): Promise<Protocol[]> => {
    const scoped = admin.with({ token });
    const ps = [
      restProtocol(scoped), graphqlProtocol(scoped, fields, REFERENCES), await mcpProtocol(endpoint, token),
      await grpcProtocol(server, token, admin.scope.tenant!, admin.scope.project!),
    ];
    opened.push(...ps);
    return ps;
  };

  before(async () => {
    server = await startServer({ backend, env: { GRPC_PORT: '0' } });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    endpoint = `${server.url}/mcp/${p.tenant}/${p.project}`;
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }, { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'] }] });
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
    // Duplicated sort values and nulls, so ties and NULL ordering are exercised; microseconds in the instants.
    const rows = Array.from({ length: 40 }, (_, i) => ({
      total: i % 5 === 0 ? null : `${(i * 7) % 13}.${i % 10}0`,
      qty: i % 4,
      placedAt: i % 6 === 0 ? null : `2026-0${1 + (i % 3)}-1${i % 10}T0${i % 10}:00:00.${String(i).padStart(6, '0')}Z`,
      status: ['pending', 'paid', 'void'][i % 3],
      note: i % 3 === 0 ? null : `note ${i % 7}`,
      customer: i % 4 === 0 ? null : customers[i % 3],
    }));
    const seeded = await admin.post('/api/orders/batch', { items: rows });
    expectStatus(seeded, 201);
    someOrder = seeded.body.data[5];
    asAdmin = await open(server.adminToken, FIELDS);
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    const reg = await anon.post('/api/identity/register', { email, password: 'long enough pw' });
    expectStatus(reg, 201);
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { subjectId: reg.body.data.subjectId, grant: 'entity:Order:read', fields: ['status', 'qty', 'customer'] }), 201);
    asUser = await open((await anon.post('/api/identity/login', { email, password: 'long enough pw' })).body.accessToken, USER_FIELDS);
  });
  after(async () => {
    for (const p of opened) await p.close();
    await server?.close();
  });

  it('120 list queries: the same rows in the same order with the same values and totals, page by page', async () => {
    let compared = 0;
    for (const filter of FILTERS) {
      for (const sort of SORTS) {
        for (const pageSize of SIZES) {
          const call: ListCall = { filter, sort, pageSize, includeTotal: true };
          const what = `filter ${JSON.stringify(filter)} sort ${sort} pageSize ${pageSize}`;
          const [rest, ...others] = await Promise.all(asAdmin.map((p) => allPages(p, call)));
          assert.ok(!isRefusal(rest), `REST refused ${what}: ${JSON.stringify(rest)}`);
          for (const [i, other] of others.entries()) {
            const name = asAdmin[i + 1]!.name;
            assert.ok(!isRefusal(other), `${name} refused ${what}: ${JSON.stringify(other)}`);
            assert.equal(other.total, rest.total, `${name} total, ${what}`);
            assert.equal(other.pages, rest.pages, `${name} pages, ${what}`);
            assert.deepEqual(other.rows.map((r) => pick(r, FIELDS)), rest.rows.map((r) => pick(r, FIELDS)), `${name} rows, ${what}`);
          }
          compared++;
        }
      }
    }
    assert.equal(compared, FILTERS.length * SORTS.length * SIZES.length);
  });

  it('a read-only user with a field mask reads the same visible values everywhere', async () => {
    const call: ListCall = { filter: { status: { ne: 'void' } }, sort: 'qty', pageSize: 7 };
    const [rest, ...others] = await Promise.all(asUser.map((p) => allPages(p, call)));
    assert.ok(!isRefusal(rest));
    assert.ok(rest.rows.length > 0);
    for (const row of rest.rows) for (const masked of ['total', 'note', 'placedAt']) assert.equal(row[masked], undefined, `REST leaves out ${masked}`);
    for (const [i, other] of others.entries()) {
      assert.ok(!isRefusal(other), asUser[i + 1]!.name);
      assert.deepEqual(other.rows.map((r) => pick(r, USER_FIELDS)), rest.rows.map((r) => pick(r, USER_FIELDS)), asUser[i + 1]!.name);
    }
  });

  it('the same refusals, code and reasonCode, for 13 denied or invalid actions', async () => {
    const id = someOrder.id as string;
    const cases: Array<{ what: string; as: 'user' | 'admin'; run: (p: Protocol) => Promise<Answer<unknown>> }> = [
      { what: 'a filter through a relation the caller may not read', as: 'user', run: (p) => p.list({ filter: { customer: { tier: { eq: 'pro' } } }, sort: 'createdAt', pageSize: 5 }) },
      { what: 'a masked field in the filter', as: 'user', run: (p) => p.list({ filter: { total: { gt: '1' } }, sort: 'createdAt', pageSize: 5 }) },
      { what: 'a masked field in the sort', as: 'user', run: (p) => p.list({ filter: null, sort: '-note', pageSize: 5 }) },
      { what: 'an empty `in` list', as: 'user', run: (p) => p.list({ filter: { qty: { in: [] } }, sort: 'createdAt', pageSize: 5 }) },
      { what: 'a forged cursor', as: 'user', run: (p) => p.list({ filter: null, sort: 'createdAt', pageSize: 5, cursor: 'Z2FyYmFnZQ' }) },
      { what: 'a page size above the maximum', as: 'user', run: (p) => p.list({ filter: null, sort: 'createdAt', pageSize: 201 }) }, // MAX_PAGE_SIZE is 200
      { what: 'reading a row that does not exist', as: 'user', run: (p) => p.get(randomUUID()) },
      { what: 'creating without the insert grant', as: 'user', run: (p) => p.create({ status: 'paid' }) },
      { what: 'updating without the update grant', as: 'user', run: (p) => p.update(id, { qty: 9 }) },
      { what: 'deleting without the delete grant', as: 'user', run: (p) => p.remove(id) },
      { what: 'a reference to a row that does not exist', as: 'admin', run: (p) => p.create({ status: 'paid', customer: randomUUID() }) },
      { what: 'an update whose If-Match is stale', as: 'admin', run: (p) => p.update(id, { qty: 3 }, randomUUID()) },
      { what: 'deleting a row that does not exist', as: 'admin', run: (p) => p.remove(randomUUID()) },
    ];
    for (const c of cases) {
      const ps = c.as === 'user' ? asUser : asAdmin;
      const [rest, ...others] = await Promise.all(ps.map((p) => c.run(p)));
      assert.ok(isRefusal(rest), `REST refuses ${c.what}: ${JSON.stringify(rest)}`);
      assert.notEqual(rest.refused.code, 'INTERNAL', c.what);
      for (const [i, other] of others.entries()) {
        assert.ok(isRefusal(other), `${ps[i + 1]!.name} refuses ${c.what}: ${JSON.stringify(other)}`);
        // GraphQL's nullable `order(id:)` reads a missing row as null: the same NOT_FOUND, in GraphQL's own form.
        const expected: { code: string; reasonCode: string } = other.refused.reasonCode === GRAPHQL_NULL && ps[i + 1]!.name === 'GraphQL' ? { ...rest.refused, reasonCode: GRAPHQL_NULL } : rest.refused;
        assert.deepEqual(other.refused, expected, `${ps[i + 1]!.name}: ${c.what}`);
      }
    }
  });

  it('writes through one protocol are read back the same through every other', async () => {
    for (const [i, writer] of asAdmin.entries()) {
      const created = await writer.create({ status: 'pending', total: '4.20', qty: i, note: `via ${writer.name}` });
      assert.ok(!isRefusal(created), `${writer.name} create: ${JSON.stringify(created)}`);
      const reads = await Promise.all(asAdmin.map((p) => p.get(created.id as string)));
      for (const [j, read] of reads.entries()) {
        assert.ok(!isRefusal(read), asAdmin[j]!.name);
        assert.deepEqual(pick(read, FIELDS), pick(reads[0] as Row, FIELDS), `${asAdmin[j]!.name} reads what ${writer.name} wrote`);
      }
      const updated = await writer.update(created.id as string, { qty: 40 + i }, created.concurrencyToken as string);
      assert.ok(!isRefusal(updated), `${writer.name} update: ${JSON.stringify(updated)}`);
      assert.equal(updated.qty, 40 + i);
      const removed = await writer.remove(created.id as string);
      assert.ok(!isRefusal(removed), `${writer.name} delete: ${JSON.stringify(removed)}`);
      const gone = await Promise.all(asAdmin.map((p) => p.get(created.id as string)));
      for (const [j, g] of gone.entries()) assert.ok(isRefusal(g) && g.refused.code === 'NOT_FOUND', `${asAdmin[j]!.name} after ${writer.name} deleted`);
    }
  });
});
