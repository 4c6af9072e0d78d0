/**
 * Usage metering end to end over a real node: each entity read counts 1
 * `read.monthly`, each row written counts 1 `write.monthly` (a batch of N
 * counts N), refused and control-plane calls count nothing; GET
 * /api/Usage/{projectId}/events (and /api/usage/events) filters, pages and
 * is admin only.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const cid = (r: Reply): string => r.headers.get('x-service-correlation-id')!;

forEachBackend('usage events', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let user: Client;
  let eventsPath: string;
  /** Correlation id → what the request should have metered. */
  const expected = new Map<string, { kind: string; quantity: number; operationId: string }>();
  /** Correlation ids of requests that must meter nothing. */
  const nothing: string[] = [];

  const flush = async (): Promise<void> => {
    await server.node.services.audit.flush();
    await server.node.services.usage!.flush();
  };
  const allEvents = async (query = ''): Promise<Json[]> => {
    const out: Json[] = [];
    let cursor: string | undefined;
    for (;;) {
      const r = await admin.get(`${eventsPath}?pageSize=200${query}${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expectStatus(r, 200);
      out.push(...(r.body.data as Json[]));
      cursor = r.body.page?.next;
      if (cursor === undefined) return out;
    }
  };
  const expect = (r: Reply, status: number, kind: string, quantity: number, operationId: string): Reply => {
    expectStatus(r, status);
    expected.set(cid(r), { kind, quantity, operationId });
    return r;
  };
  const refused = (r: Reply, status: number): void => {
    expectStatus(r, status);
    nothing.push(cid(r));
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken, `u${randomUUID().slice(0, 8)}`);
    admin = p.client;
    projectId = p.projectId;
    eventsPath = `/api/Usage/${projectId}/events`;
    await defineEntity(admin, { entityName: 'Author', fields: [{ name: 'name', type: 'String', nullable: false }] });
    await defineEntity(admin, {
      entityName: 'Doc',
      fields: [{ name: 'title', type: 'String', nullable: false }, { name: 'author', type: 'ID', nullable: true, references: 'Author' }],
    });
    const anon = admin.with({ token: null });
    expectStatus(await anon.post('/api/identity/register', { email: 'usage-user@example.com', password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email: 'usage-user@example.com', password: 'long enough pw' });
    expectStatus(login, 200);
    user = admin.with({ token: login.body.accessToken });

    // Writes: 1 each, a batch of N counts N, a batch delete counts the rows it deleted.
    const author = expect(await admin.post('/api/authors', { name: 'Ada' }), 201, 'write.monthly', 1, 'Entity.Author.Create').body.data.id as string;
    const doc = expect(await admin.post('/api/docs', { title: 'one', author }), 201, 'write.monthly', 1, 'Entity.Doc.Create').body.data.id as string;
    expect(await admin.patch(`/api/docs/${doc}`, { title: 'one!' }), 200, 'write.monthly', 1, 'Entity.Doc.Update');
    expect(await admin.put(`/api/docs/${doc}`, { title: 'one!!' }), 200, 'write.monthly', 1, 'Entity.Doc.Replace');
    const batch = expect(await admin.post('/api/docs/batch', { items: [{ title: 'a' }, { title: 'b' }, { title: 'c' }, { title: 'd' }] }), 201, 'write.monthly', 4, 'Entity.Doc.BatchCreate');
    const ids = (batch.body.data as Json[]).map((d) => d.id as string);
    expect(await admin.patch('/api/docs/batch', { items: ids.slice(0, 3).map((id) => ({ id, title: 'x' })) }), 200, 'write.monthly', 3, 'Entity.Doc.BatchUpdate');
    expect(await admin.post('/api/docs/batch/delete', { ids: [ids[0], ids[1], randomUUID()] }), 200, 'write.monthly', 2, 'Entity.Doc.BatchDelete');
    expect(await admin.delete(`/api/docs/${ids[2]}`), 204, 'write.monthly', 1, 'Entity.Doc.Delete');

    // Reads: 1 each, whatever the number of rows returned.
    expect(await admin.get('/api/docs'), 200, 'read.monthly', 1, 'Entity.Doc.List');
    expect(await admin.get(`/api/docs/${doc}`), 200, 'read.monthly', 1, 'Entity.Doc.Read');
    expect(await admin.get('/api/docs/count'), 200, 'read.monthly', 1, 'Entity.Doc.Count');
    expect(await admin.get(`/api/authors/${author}/docs`), 200, 'read.monthly', 1, 'Entity.Author.RelationList.docs');

    // Refused: 403 (no grant), 422 (bad body), 404 (missing row), 401 (bad token), a batch that fails whole.
    refused(await user.get('/api/docs'), 403);
    refused(await user.post('/api/docs', { title: 'nope' }), 403);
    refused(await admin.post('/api/docs', { title: 42 }), 422);
    refused(await admin.get(`/api/docs/${randomUUID()}`), 404);
    refused(await admin.with({ token: 'not-a-token' }).get('/api/docs'), 401);
    refused(await admin.post('/api/docs/batch', { items: [{ title: 'ok' }, { title: 7 }] }), 422);

    // Control plane, identity, explainability, audit and usage itself: counted toward neither.
    refused(await admin.get('/api/TenantRecord'), 200);
    refused(await user.get('/api/identity/me'), 200);
    refused(await admin.get('/api/Explainability/surface'), 200);
    refused(await admin.get('/api/audit'), 200);
    refused(await admin.get(eventsPath), 200);
    refused(await admin.get(`/api/Usage/${projectId}/rollups`), 200);
  });
  after(async () => {
    await server?.close();
  });

  it('meters each entity read as 1 and each row written as 1, a batch of N as N', async () => {
    // Within 10 s of the responses, without forcing a flush (the writer flushes every 50 ms).
    const deadline = Date.now() + 10_000;
    let events: Json[] = [];
    for (;;) {
      events = await allEvents();
      if ([...expected.keys()].every((c) => events.some((e) => e.correlationId === c)) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const [correlationId, want] of expected) {
      const got = events.filter((e) => e.correlationId === correlationId);
      assert.equal(got.length, 1, `one event for ${want.operationId}, got ${JSON.stringify(got)}`);
      assert.equal(got[0]!.kind, want.kind, want.operationId);
      assert.equal(got[0]!.quantity, want.quantity, want.operationId);
      assert.equal(got[0]!.operationId, want.operationId);
      assert.equal(typeof got[0]!.at, 'string');
      assert.ok(!Number.isNaN(Date.parse(got[0]!.at as string)));
    }
    const sum = (kind: string): number => events.filter((e) => e.kind === kind).reduce((n, e) => n + (e.quantity as number), 0);
    assert.equal(sum('read.monthly'), 4);
    assert.equal(sum('write.monthly'), 1 + 1 + 1 + 1 + 4 + 3 + 2 + 1);
  });

  it('refused requests and control-plane, identity, explainability and usage calls consume nothing', async () => {
    await flush();
    const events = await allEvents();
    for (const c of nothing) assert.ok(!events.some((e) => e.correlationId === c), `request ${c} was metered`);
    assert.equal(events.length, expected.size, 'exactly one event per metered request');
    assert.ok(events.every((e) => (e.operationId as string).startsWith('Entity.')), JSON.stringify(events.map((e) => e.operationId)));
  });

  it('filters by kind, operationId, from and to, under both routes', async () => {
    await flush();
    const writes = await allEvents('&kind=write.monthly');
    assert.equal(writes.length, [...expected.values()].filter((e) => e.kind === 'write.monthly').length);
    assert.ok(writes.every((e) => e.kind === 'write.monthly'));
    const lists = await allEvents('&operationId=Entity.Doc.List');
    assert.deepEqual(lists.map((e) => e.operationId), ['Entity.Doc.List']);
    const all = await allEvents();
    const mid = all[3]!.at as string;
    const from = await allEvents(`&from=${encodeURIComponent(mid)}`);
    const to = await allEvents(`&to=${encodeURIComponent(mid)}`);
    assert.equal(from.length + to.length, all.length, 'from is inclusive, to exclusive, together they cover everything');
    assert.ok(from.every((e) => Date.parse(e.at as string) >= Date.parse(mid)));
    assert.equal((await allEvents('&from=2999-01-01T00:00:00Z')).length, 0);
    const scoped = await admin.get('/api/usage/events?pageSize=200');
    expectStatus(scoped, 200);
    assert.deepEqual(scoped.body.data, all);
  });

  it('pages with an opaque cursor: every event once, in order', async () => {
    await flush();
    const all = await allEvents();
    const paged: Json[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const r = await admin.get(`${eventsPath}?pageSize=3${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expectStatus(r, 200);
      assert.ok((r.body.data as Json[]).length <= 3);
      paged.push(...(r.body.data as Json[]));
      pages++;
      cursor = r.body.page?.next;
      if (cursor === undefined) break;
    }
    assert.equal(pages, Math.ceil(all.length / 3));
    assert.deepEqual(paged.map((e) => e.id), all.map((e) => e.id));
    assert.equal(new Set(paged.map((e) => e.id)).size, paged.length);
  });

  it('one evidence row per request: the audit row carries the usage, usage_events none of it', async () => {
    await flush();
    const db = server.node.services.db;
    for (const [correlationId, want] of expected) {
      const audit = await db.query<{ k: string | null; q: string | null; d: Record<string, string> | null }>(
        'SELECT usage_kind AS k, usage_quantity::text AS q, usage_dimensions AS d FROM plinth.audit WHERE correlation_id = $1', [correlationId],
      );
      assert.equal(audit.rows.length, 1, want.operationId);
      assert.deepEqual({ ...audit.rows[0] }, { k: want.kind, q: String(want.quantity), d: { entity: want.operationId.split('.')[1]! } }, want.operationId);
      const separate = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM plinth.usage_events WHERE correlation_id = $1', [correlationId]);
      assert.equal(separate.rows[0]!.n, '0', want.operationId);
    }
    for (const correlationId of nothing) {
      const audit = await db.query<{ k: string | null }>('SELECT usage_kind AS k FROM plinth.audit WHERE correlation_id = $1', [correlationId]);
      assert.ok(audit.rows.every((r) => r.k === null), `a refused or unmetered request carries no usage: ${correlationId}`);
    }
  });

  it('pages across both sources (audit rows and usage_events), ties on one instant included', async () => {
    await flush();
    const db = server.node.services.db;
    const before = await allEvents();
    const tie = before[2]!.at as string;
    // Usage no request carries (a webhook delivery) lives in usage_events: two at an audit-borne event's instant, one later.
    const tag = randomUUID();
    const p = await db.query<{ tenant_id: string }>('SELECT tenant_id FROM plinth.projects WHERE id = $1', [projectId]);
    for (const [i, at] of [tie, tie, new Date(Date.parse(before[before.length - 1]!.at as string) + 1).toISOString()].entries()) {
      await db.query(
        `INSERT INTO plinth.usage_events (tenant_id, project_id, kind, quantity, at, operation_id, correlation_id) VALUES ($1, $2, 'webhook.deliveries.monthly', 1, $3, 'Webhook.Delivery', $4)`,
        [p.rows[0]!.tenant_id, projectId, at, `${tag}-${i}`],
      );
    }
    try {
      const all = await allEvents();
      assert.equal(all.length, before.length + 3);
      // The order is (at, source, id): audit-borne events (`a…`) before usage_events (`e…`) on one instant.
      const key = (e: Json): [number, string, bigint] => [Date.parse(e.at as string), (e.id as string)[0]!, BigInt((e.id as string).slice(1))];
      for (let i = 1; i < all.length; i++) {
        const [a, b] = [key(all[i - 1]!), key(all[i]!)];
        assert.ok(a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2]))), `events ${i - 1} and ${i} out of order`);
      }
      assert.deepEqual(all.filter((e) => e.at === tie).map((e) => (e.id as string)[0]).slice(-2), ['e', 'e']);
      for (const size of [1, 2, 5]) {
        const paged: Json[] = [];
        let cursor: string | undefined;
        do {
          const r = await admin.get(`${eventsPath}?pageSize=${size}${cursor === undefined ? '' : `&cursor=${cursor}`}`);
          expectStatus(r, 200);
          paged.push(...(r.body.data as Json[]));
          cursor = r.body.page?.next;
        } while (cursor !== undefined);
        assert.deepEqual(paged.map((e) => e.id), all.map((e) => e.id), `pageSize=${size}`);
      }
      // A kind no audit row carries is read from usage_events alone.
      const hooks = await allEvents('&kind=webhook.deliveries.monthly');
      assert.equal(hooks.length, 3);
    } finally {
      await db.query('DELETE FROM plinth.usage_events WHERE correlation_id LIKE $1', [`${tag}-%`]);
    }
  });

  it('another project sees none of these events', async () => {
    const other = await bootstrapProject(server.url, server.adminToken, `o${randomUUID().slice(0, 8)}`);
    const r = await other.client.get(`/api/Usage/${other.projectId}/events`);
    expectStatus(r, 200);
    assert.deepEqual(r.body.data, []);
  });

  it('is admin only: a project user gets 403', async () => {
    expectError(await user.get(eventsPath), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.get('/api/usage/events'), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.get(`/api/Usage/${projectId}/rollups`), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
  });

  it('refuses bad filters and cursors with 422 naming the field, and an unknown project with 404', async () => {
    expectError(await admin.get(`${eventsPath}?kind=${encodeURIComponent('Read Monthly!')}`), 422, 'VALIDATION_FAILED', 'Usage.InvalidKind', 'kind');
    expectError(await admin.get(`${eventsPath}?operationId=${encodeURIComponent("x'; drop")}`), 422, 'VALIDATION_FAILED', 'Usage.InvalidOperationId', 'operationId');
    expectError(await admin.get(`${eventsPath}?from=yesterday`), 422, 'VALIDATION_FAILED', 'Usage.InvalidInstant', 'from');
    expectError(await admin.get(`${eventsPath}?to=2024-13-45T99:00:00Z`), 422, 'VALIDATION_FAILED', 'Usage.InvalidInstant', 'to');
    expectError(await admin.get(`${eventsPath}?cursor=garbage`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    const forged = Buffer.from('2024-01-01T00:00:00.000Z|99999999999999999999').toString('base64url');
    expectError(await admin.get(`${eventsPath}?cursor=${forged}`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    for (const pos of ['a99999999999999999999', 'x12', 'a', 'e-1', 'a1|e2']) {
      const bad = Buffer.from(`2024-01-01T00:00:00.000Z|${pos}`).toString('base64url');
      expectError(await admin.get(`${eventsPath}?cursor=${bad}`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    }
    expectError(await admin.get(`${eventsPath}?pageSize=0`), 422, 'VALIDATION_FAILED', 'Query.InvalidPageSize', 'pageSize');
    expectError(await admin.get(`/api/Usage/${randomUUID()}/events`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get('/api/Usage/not-a-project/events'), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get(`/api/Usage/${randomUUID()}/rollups`), 404, 'NOT_FOUND', 'Project.NotFound');
  });
});
