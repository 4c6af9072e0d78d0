/**
 * Entity change events over HTTP: each committed write leaves exactly one
 * event (moved from the transactional outbox to the log asynchronously),
 * a rolled-back write leaves none, and the log is filtered and paged per project.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

type Project = Awaited<ReturnType<typeof bootstrapProject>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const POLL_DEADLINE_MS = 10_000;

const newSlug = (): string => `e${randomUUID().slice(0, 8)}`;
const newCorrelation = (): string => `evt-${randomUUID()}`;
const corr = (id: string): Record<string, string> => ({ 'x-service-correlation-id': id });
const q = (filter: Json): string => `filter=${encodeURIComponent(JSON.stringify(filter))}`;



const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'name', type: 'String', nullable: true },
  ],
};
const ORDER = {
  entityName: 'Order',
  softDelete: true,
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'], default: 'pending' },
    { name: 'customer', type: 'ID', nullable: true, references: 'Customer' },
  ],
};

/** Every event of the project matching `filter`, following cursors. */
async function allEvents(client: Client, filter?: Json, pageSize = 200): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const parts = [`pageSize=${pageSize}`];
    if (filter !== undefined) parts.push(q(filter));
    if (cursor !== undefined) parts.push(`cursor=${encodeURIComponent(cursor)}`);
    const r = await client.get(`/api/events?${parts.join('&')}`);
    expectStatus(r, 200);
    out.push(...r.body.data);
    cursor = r.body.page.next;
    if (cursor === undefined) return out;
  }
  throw new Error('cursor paging did not end');
}

/** Polls until at least `count` events match `filter` or the deadline passes. */
async function waitForEvents(client: Client, filter: Json, count: number): Promise<Json[]> {
  const deadline = Date.now() + POLL_DEADLINE_MS;
  for (;;) {
    const events = await allEvents(client, filter);
    if (events.length >= count) return events;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${count} events matching ${JSON.stringify(filter)}; have ${events.length}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A committed write whose event shows up proves every earlier committed
 * write's event has been moved too (the outbox drains in commit order).
 */
async function barrier(client: Client): Promise<void> {
  const id = newCorrelation();
  expectStatus(await client.post('/api/barriers', { n: 1 }, corr(id)), 201);
  await waitForEvents(client, { correlationId: id }, 1);
}

forEachBackend('entity events', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let client: Client;

  async function newProject(): Promise<Project> {
    const np = await bootstrapProject(server.url, server.adminToken, newSlug());
    await defineEntity(np.client, CUSTOMER);
    await defineEntity(np.client, ORDER);
    await defineEntity(np.client, { entityName: 'Barrier', fields: [{ name: 'n', type: 'Int', nullable: false }] });
    return np;
  }

  /** Performs a write with a fresh correlation id and returns the single event it produced. */
  async function onlyEvent(write: (headers: Record<string, string>) => Promise<Reply>, status: number, c: Client = client): Promise<{ reply: Reply; event: Json }> {
    const id = newCorrelation();
    const reply = await write(corr(id));
    expectStatus(reply, status);
    assert.equal(reply.headers.get('x-service-correlation-id'), id);
    await waitForEvents(c, { correlationId: id }, 1);
    await barrier(c);
    const events = await allEvents(c, { correlationId: id });
    assert.equal(events.length, 1, `expected one event, got ${JSON.stringify(events)}`);
    return { reply, event: events[0]! };
  }

  /** Performs a write that must fail and asserts it left no event. */
  async function noEvent(write: (headers: Record<string, string>) => Promise<Reply>): Promise<Reply> {
    const id = newCorrelation();
    const reply = await write(corr(id));
    await barrier(client);
    assert.deepEqual(await allEvents(client, { correlationId: id }), []);
    return reply;
  }

  before(async () => {
    server = await startServer({ backend });
    p = await newProject();
    client = p.client;
  });
  after(async () => {
    await server?.close();
  });

  it('a create writes one event with the full envelope', async () => {
    const before = Date.now();
    const { reply, event } = await onlyEvent((h) => client.post('/api/customers', { email: 'ada@example.com', name: 'Ada' }, h), 201);
    const after = Date.now();
    assert.deepEqual(Object.keys(event).sort(), ['correlationId', 'data', 'id', 'occurredAt', 'projectId', 'publicationVersion', 'tenantId', 'type']);
    assert.match(event.id, UUID);
    assert.equal(event.type, 'entity.Customer.created');
    assert.match(event.occurredAt, ISO_UTC);
    const at = Date.parse(event.occurredAt);
    assert.ok(at >= before - 2_000 && at <= after + 2_000, `occurredAt ${event.occurredAt} outside the write window`);
    assert.equal(event.tenantId, p.tenantId);
    assert.equal(event.projectId, p.projectId);
    assert.equal(event.publicationVersion, 3);
    assert.equal(event.correlationId, reply.headers.get('x-service-correlation-id'));
    assert.deepEqual(event.data, { entity: 'Customer', entityId: reply.body.data.id, changedFields: ['email', 'name'], branch: 'main' });
  });

  it('an update names exactly the patched fields', async () => {
    const c = await client.post('/api/customers', { email: 'bob@example.com' });
    expectStatus(c, 201);
    const id = c.body.data.id as string;
    const one = await onlyEvent((h) => client.patch(`/api/customers/${id}`, { name: 'Bob' }, h), 200);
    assert.equal(one.event.type, 'entity.Customer.updated');
    assert.deepEqual(one.event.data, { entity: 'Customer', entityId: id, changedFields: ['name'], branch: 'main' });
    const two = await onlyEvent((h) => client.patch(`/api/customers/${id}`, { email: 'robert@example.com', name: null }, h), 200);
    assert.deepEqual(two.event.data.changedFields, ['email', 'name']);
    assert.notEqual(two.event.id, one.event.id);
    // A matching If-Match is a normal update with one event.
    const three = await onlyEvent((h) => client.patch(`/api/customers/${id}`, { name: 'Rob' }, { ...h, 'if-match': two.reply.headers.get('etag')! }), 200);
    assert.deepEqual(three.event.data.changedFields, ['name']);
  });

  it('soft delete, hard delete and force delete each write one deleted event', async () => {
    const order = await client.post('/api/orders', { total: '3.00' });
    const other = await client.post('/api/orders', { total: '4.00' });
    const cust = await client.post('/api/customers', { email: 'del@example.com' });
    for (const r of [order, other, cust]) expectStatus(r, 201);

    const soft = await onlyEvent((h) => client.delete(`/api/orders/${order.body.data.id}`, undefined, h), 204);
    assert.equal(soft.event.type, 'entity.Order.deleted');
    assert.deepEqual(soft.event.data, { entity: 'Order', entityId: order.body.data.id, changedFields: [], branch: 'main' });
    // Deleting it again finds no live row: 404 and no event.
    expectError(await noEvent((h) => client.delete(`/api/orders/${order.body.data.id}`, undefined, h)), 404, 'NOT_FOUND', 'Order.NotFound');

    const forced = await onlyEvent((h) => client.delete(`/api/orders/${other.body.data.id}?force=true`, undefined, h), 204);
    assert.equal(forced.event.type, 'entity.Order.deleted');
    assert.equal(forced.event.data.entityId, other.body.data.id);

    const hard = await onlyEvent((h) => client.delete(`/api/customers/${cust.body.data.id}`, undefined, h), 204);
    assert.equal(hard.event.type, 'entity.Customer.deleted');
    assert.deepEqual(hard.event.data, { entity: 'Customer', entityId: cust.body.data.id, changedFields: [], branch: 'main' });
  });

  it('rolled-back writes leave no event', async () => {
    expectStatus(await client.post('/api/customers', { email: 'taken@example.com' }), 201);
    expectError(await noEvent((h) => client.post('/api/customers', { email: 'taken@example.com' }, h)), 409, 'CONFLICT', 'CustomerValidation.UniqueViolation', 'email');

    // A batch that fails in the database (duplicate inside the batch) writes no row and no event.
    const batch = await noEvent((h) => client.post('/api/customers/batch', { items: [{ email: 'b1@example.com' }, { email: 'b2@example.com' }, { email: 'b1@example.com' }] }, h));
    expectError(batch, 409, 'CONFLICT', 'CustomerValidation.UniqueViolation');
    const list = await client.get(`/api/customers?${q({ email: { in: ['b1@example.com', 'b2@example.com'] } })}`);
    expectStatus(list, 200);
    assert.deepEqual(list.body.data, []);
    // A batch with one invalid item fails before any write.
    expectError(await noEvent((h) => client.post('/api/customers/batch', { items: [{ email: 'b3@example.com' }, { name: 'no email' }] }, h)), 422, 'VALIDATION_FAILED', 'CustomerValidation.Required', 'items[1].email');

    // A stale If-Match changes nothing.
    const c = await client.post('/api/customers', { email: 'etag@example.com' });
    expectStatus(c, 201);
    const stale = c.headers.get('etag')!;
    expectStatus(await client.patch(`/api/customers/${c.body.data.id}`, { name: 'first' }), 200);
    expectError(await noEvent((h) => client.patch(`/api/customers/${c.body.data.id}`, { name: 'second' }, { ...h, 'if-match': stale })), 409, 'CONFLICT', 'CustomerValidation.ConcurrencyTokenMismatch');
    assert.equal((await client.get(`/api/customers/${c.body.data.id}`)).body.data.name, 'first');

    // A successful batch writes one event per row, under the batch's correlation id.
    const id = newCorrelation();
    const ok = await client.post('/api/customers/batch', { items: [{ email: 'b4@example.com' }, { email: 'b5@example.com' }] }, corr(id));
    expectStatus(ok, 201);
    const events = await waitForEvents(client, { correlationId: id }, 2);
    assert.deepEqual(events.map((e) => [e.type, e.data.entityId]), ok.body.data.map((row: Json) => ['entity.Customer.created', row.id]));

    // An idempotent retry replays the answer without a second event.
    const key = randomUUID();
    const first = await onlyEvent((h) => client.post('/api/customers', { email: 'idem@example.com' }, { ...h, 'idempotency-key': key }), 201);
    const replay = await noEvent((h) => client.post('/api/customers', { email: 'idem@example.com' }, { ...h, 'idempotency-key': key }));
    expectStatus(replay, 201);
    assert.equal(replay.body.data.id, first.reply.body.data.id);
  });

  it('filters by type, type prefix, entity, correlation id and time', async () => {
    const fp = await newProject();
    const c = fp.client;
    const c1 = newCorrelation();
    const cust = await c.post('/api/customers', { email: 'f1@example.com' }, corr(c1));
    expectStatus(cust, 201);
    const o1 = await c.post('/api/orders', { total: '1.00', customer: cust.body.data.id });
    expectStatus(o1, 201);
    expectStatus(await c.patch(`/api/orders/${o1.body.data.id}`, { status: 'paid' }), 200);
    const all3 = await waitForEvents(c, {}, 3);
    const since = all3[2]!.occurredAt as string;
    const o2 = await c.post('/api/orders', { total: '2.00' });
    expectStatus(o2, 201);
    expectStatus(await c.delete(`/api/orders/${o2.body.data.id}`), 204);
    const all = await waitForEvents(c, {}, 5);
    assert.deepEqual(all.map((e) => e.type), [
      'entity.Customer.created', 'entity.Order.created', 'entity.Order.updated', 'entity.Order.created', 'entity.Order.deleted',
    ]);
    const ids = (events: Json[]): string[] => events.map((e) => e.id);

    assert.deepEqual(ids(await allEvents(c, { type: 'entity.Order.created' })), [all[1]!.id, all[3]!.id]);
    assert.deepEqual(ids(await allEvents(c, { type: 'entity.Order.*' })), ids(all.slice(1)));
    assert.deepEqual(ids(await allEvents(c, { type: 'entity.*' })), ids(all));
    assert.deepEqual(ids(await allEvents(c, { type: 'entity.Invoice.*' })), []);
    assert.deepEqual(ids(await allEvents(c, { entity: 'Customer' })), [all[0]!.id]);
    assert.deepEqual(ids(await allEvents(c, { entity: 'Order', type: 'entity.Order.deleted' })), [all[4]!.id]);
    assert.deepEqual(ids(await allEvents(c, { correlationId: c1 })), [all[0]!.id]);
    assert.deepEqual(ids(await allEvents(c, { since })), ids(all.filter((e) => Date.parse(e.occurredAt) >= Date.parse(since))));
    assert.ok((await allEvents(c, { since })).some((e) => e.id === all[2]!.id));
    assert.deepEqual(ids(await allEvents(c, { until: since })), ids(all.filter((e) => Date.parse(e.occurredAt) < Date.parse(since))));
    assert.deepEqual(ids(await allEvents(c, { since: '2999-01-01T00:00:00Z' })), []);
    // The alias route serves the same log.
    const alias = await c.get(`/api/Event?${q({ entity: 'Customer' })}`);
    expectStatus(alias, 200);
    assert.deepEqual(alias.body.data, [all[0]]);
  });

  it('cursor paging with pageSize 2 visits every event once', async () => {
    const { client } = await newProject();
    for (let i = 0; i < 7; i++) expectStatus(await client.post('/api/customers', { email: `page${i}@example.com` }), 201);
    const all = await waitForEvents(client, {}, 7);
    assert.equal(all.length, 7);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await client.get(`/api/events?pageSize=2${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expectStatus(r, 200);
      assert.equal(r.body.page.size, 2);
      assert.ok(r.body.data.length >= 1 && r.body.data.length <= 2);
      seen.push(...r.body.data.map((e: Json) => e.id));
      cursor = r.body.page.next;
      pages++;
      if (cursor !== undefined) assert.equal(r.body.data.length, 2);
    } while (cursor !== undefined);
    assert.deepEqual(seen, all.map((e) => e.id));
    assert.deepEqual(all.map((e) => e.data.entityId).length, new Set(all.map((e) => e.data.entityId)).size);
    assert.equal(pages, 4);

    expectError(await client.get('/api/events?cursor=bm90LWEtY3Vyc29y'), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    // Cursor-shaped but past bigint (was a 500).
    expectError(await client.get(`/api/events?cursor=${Buffer.from('e9999999999999999999').toString('base64url')}`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    expectError(await client.get('/api/events?pageSize=0'), 422, 'VALIDATION_FAILED', 'Query.InvalidPageSize', 'pageSize');
    expectError(await client.get('/api/events?pageSize=201'), 422, 'VALIDATION_FAILED', 'Query.PageSizeTooLarge', 'pageSize');
  });

  it('reads one event by id; unknown ids are 404 Event.NotFound', async () => {
    const id = newCorrelation();
    expectStatus(await client.post('/api/customers', { email: `read-${id}@example.com` }, corr(id)), 201);
    const [first] = await waitForEvents(client, { correlationId: id }, 1);
    assert.ok(first);
    for (const path of [`/api/events/${first.id}`, `/api/Event/${first.id}`, `/api/events/${first.id.toUpperCase()}`]) {
      const r = await client.get(path);
      expectStatus(r, 200);
      assert.deepEqual(r.body.data, first);
      assert.equal(r.body.meta.correlationId, r.headers.get('x-service-correlation-id'));
    }
    expectError(await client.get(`/api/events/${randomUUID()}`), 404, 'NOT_FOUND', 'Event.NotFound');
    expectError(await client.get('/api/events/not-a-uuid'), 404, 'NOT_FOUND', 'Event.NotFound');
  });

  it('rejects a malformed filter with 422', async () => {
    const bad: Array<[string, string, string]> = [
      ['{not json', 'Filter.MalformedJson', 'filter'],
      ['[]', 'Filter.InvalidFilter', 'filter'],
      ['"entity"', 'Filter.InvalidFilter', 'filter'],
      [JSON.stringify({ kind: 'created' }), 'Filter.UnknownField', 'filter.kind'],
      [JSON.stringify({ type: 3 }), 'Filter.InvalidValue', 'filter.type'],
      [JSON.stringify({ entity: '' }), 'Filter.InvalidValue', 'filter.entity'],
      [JSON.stringify({ since: 'yesterday' }), 'Filter.InvalidValue', 'filter.since'],
      [JSON.stringify({ until: '2024-13-45T99:00:00Z' }), 'Filter.InvalidValue', 'filter.until'],
      // Shapes Date.parse accepts but the database refuses (they were 500s).
      [JSON.stringify({ since: '2024-02-30T00:00:00Z' }), 'Filter.InvalidValue', 'filter.since'],
      [JSON.stringify({ since: '0000-01-01T00:00:00Z' }), 'Filter.InvalidValue', 'filter.since'],
      [JSON.stringify({ until: '2024-01-01T00:00:00+16:00' }), 'Filter.InvalidValue', 'filter.until'],
    ];
    for (const [filter, reason, field] of bad) {
      const r = await client.get(`/api/events?filter=${encodeURIComponent(filter)}`);
      assert.equal(r.status, 422, `${filter}: ${r.text}`);
      const e = errorOf(r);
      assert.equal(e.code, 'VALIDATION_FAILED', filter);
      assert.equal(e.reasonCode, reason, filter);
      assert.equal(e.field, field, filter);
    }
    // Offsets and leap days PostgreSQL accepts still work.
    expectStatus(await client.get(`/api/events?${q({ since: '2024-02-29T10:00:00+15:00', until: '2999-01-01T00:00:00-02:30' })}`), 200);
  });

  it('events belong to their project', async () => {
    const other = await newProject();
    const id = newCorrelation();
    expectStatus(await other.client.post('/api/customers', { email: 'other@example.com' }, corr(id)), 201);
    const [theirs] = await waitForEvents(other.client, { correlationId: id }, 1);
    assert.equal(theirs!.projectId, other.projectId);
    assert.deepEqual(await allEvents(client, { correlationId: id }), []);
    assert.ok((await allEvents(client)).every((e) => e.projectId === p.projectId));
    expectError(await client.get(`/api/events/${theirs!.id}`), 404, 'NOT_FOUND', 'Event.NotFound');
    expectStatus(await other.client.get(`/api/events/${theirs!.id}`), 200);
  });
});
