/**
 * Combined creates (runtime/operations/entity/create-combiner.ts): concurrent
 * creates of one entity are written as multi-row INSERTs, yet each request
 * answers its own row, leaves its own event under its own correlation id, and
 * answers its own error when one row of a combined statement is refused,
 * without failing or duplicating the others.
 *
 * Creates combine only when they queue: on PostgreSQL behind the pool's busy
 * connections. In-process PGlite runs each statement on the event loop, so a
 * create usually ends before the next one is read and nothing queues; there the
 * suite checks the same outcomes without requiring a combined statement.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';
import { combinedCreates } from '../../runtime/operations/entity/index.js';

const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'seat', type: 'Int', nullable: false },
  ],
};

const corr = (): string => `cmb-${randomUUID()}`;

/** Every event of the project, following cursors. */
async function allEvents(client: Client): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const r = await client.get(`/api/events?pageSize=200${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expectStatus(r, 200);
    out.push(...r.body.data);
    cursor = r.body.page.next;
    if (cursor === undefined) return out;
  }
  throw new Error('cursor paging did not end');
}

/** The project's `entity.Customer.created` events by correlation id, once `count` of them are in the log. */
async function createdEvents(client: Client, count: number): Promise<Map<string, Json[]>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = (await allEvents(client)).filter((e) => e.type === 'entity.Customer.created');
    if (events.length >= count) {
      const by = new Map<string, Json[]>();
      for (const e of events) by.set(e.correlationId, [...(by.get(e.correlationId) ?? []), e]);
      return by;
    }
    if (Date.now() > deadline) assert.fail(`expected ${count} created events, have ${events.length}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

forEachBackend('combined creates', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  async function newProject(): Promise<{ client: Client; projectId: string }> {
    const p = await bootstrapProject(server.url, server.adminToken, `c${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, CUSTOMER);
    return p;
  }

  /** Transactions that wrote the project's customers: rows of one combined statement share one. */
  async function writingTransactions(projectId: string): Promise<number> {
    const db = server.node.services.db;
    const schema = (await db.query<{ s: string }>(`SELECT schema_name AS s FROM plinth.branches WHERE project_id = $1 AND name = 'main'`, [projectId])).rows[0]!.s;
    return Number((await db.query<{ n: number }>(`SELECT count(DISTINCT xmin::text)::int AS n FROM "${schema}"."Customer"`)).rows[0]!.n);
  }

  it('a burst of creates: rows written together, each request its own row and its own event', async () => {
    const { client, projectId } = await newProject();
    const n = 120;
    const sent = Array.from({ length: n }, (_, seat) => ({ seat, email: `p${seat}@example.com`, correlation: corr() }));
    const replies = await Promise.all(sent.map((s) => client.post('/api/customers', { email: s.email, seat: s.seat }, { 'x-service-correlation-id': s.correlation })));
    for (const [i, r] of replies.entries()) {
      expectStatus(r, 201);
      assert.equal(r.body.data.email, sent[i]!.email, 'each request answers its own row');
      assert.equal(r.body.data.seat, sent[i]!.seat);
      assert.equal(r.headers.get('x-service-correlation-id'), sent[i]!.correlation);
    }
    assert.equal(new Set(replies.map((r) => r.body.data.id)).size, n, 'distinct ids');
    if (backend === 'postgres') {
      const transactions = await writingTransactions(projectId);
      assert.ok(transactions < n, `expected combined statements; ${transactions} transactions wrote ${n} rows`);
    }

    const events = await createdEvents(client, n);
    for (const [i, r] of replies.entries()) {
      const mine = events.get(sent[i]!.correlation) ?? [];
      assert.equal(mine.length, 1, `one event for request ${i}`);
      assert.equal(mine[0]!.data.entityId, r.body.data.id, 'the event names the row its own request created');
    }
    const list = await client.get('/api/customers?pageSize=200');
    expectStatus(list, 200);
    assert.equal(list.body.data.length, n);
  });

  it('one refused row in a combined statement: it answers 409, the others are written once', async () => {
    const { client } = await newProject();
    expectStatus(await client.post('/api/customers', { email: 'taken@example.com', seat: -1 }), 201);
    const n = 60;
    const refusedBefore = combinedCreates.refused;
    // Every tenth create reuses the taken email; two more race for one fresh email.
    const sent = Array.from({ length: n }, (_, seat) => ({
      seat, email: seat % 10 === 5 ? 'taken@example.com' : seat === 20 || seat === 21 ? 'race@example.com' : `q${seat}@example.com`, correlation: corr(),
    }));
    const replies: Reply[] = await Promise.all(sent.map((s) => client.post('/api/customers', { email: s.email, seat: s.seat }, { 'x-service-correlation-id': s.correlation })));
    let created = 0;
    for (const [i, r] of replies.entries()) {
      const s = sent[i]!;
      if (s.email === 'taken@example.com') {
        assert.equal(r.status, 409, `seat ${s.seat}: ${r.text}`);
        const e = errorOf(r);
        assert.equal(e.code, 'CONFLICT');
        assert.equal(e.reasonCode, 'CustomerValidation.UniqueViolation');
        assert.equal(e.field, 'email');
        assert.equal(e.correlationId, s.correlation);
      } else if (s.email !== 'race@example.com') {
        expectStatus(r, 201);
        assert.equal(r.body.data.seat, s.seat);
        created++;
      }
    }
    if (backend === 'postgres') assert.ok(combinedCreates.refused > refusedBefore, 'a combined statement was refused and its creates ran alone');
    const race = [replies[20]!, replies[21]!].map((r) => r.status).sort();
    assert.deepEqual(race, [201, 409], 'of two creates racing for one unique value, exactly one wins');
    created++;

    const events = await createdEvents(client, created + 1);
    for (const [i, r] of replies.entries()) {
      const mine = events.get(sent[i]!.correlation) ?? [];
      assert.equal(mine.length, r.status === 201 ? 1 : 0, `events of seat ${i} (status ${r.status})`);
    }
    const list = await client.get('/api/customers?pageSize=200');
    expectStatus(list, 200);
    assert.equal(list.body.data.length, created + 1, 'nothing written twice, nothing refused written');
    assert.equal(new Set(list.body.data.map((c: Json) => c.email)).size, created + 1);
  });
});
