/**
 * GET /api/audit (filter, cursor paging) and GET /api/audit/tail (SSE, with
 * the `eventsource` client) over the rows the pipeline's stage 6 writes.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventSource } from 'eventsource';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const WAIT_MS = 10_000;
const q = (filter: Json, extra = ''): string => `/api/audit?filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`;

forEachBackend('audit', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let user: Client;
  let userLabel: string;
  const sources: EventSource[] = [];
  const created: string[] = [];
  const denied: string[] = [];

  /** Polls until the filter yields at least `count` rows (the audit writer flushes every 50 ms). */
  const rowsOf = async (filter: Json, count: number): Promise<Json[]> => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const r = await admin.get(q(filter, '&pageSize=200'));
      expectStatus(r, 200);
      const rows = r.body.data as Json[];
      if (rows.length >= count) return rows;
      if (Date.now() > deadline) assert.fail(`expected ${count} audit rows for ${JSON.stringify(filter)}, got ${rows.length}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken, `a${randomUUID().slice(0, 8)}`);
    admin = p.client;
    await defineEntity(admin, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const anon = admin.with({ token: null });
    expectStatus(await anon.post('/api/identity/register', { email: 'auditor@example.com', password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email: 'auditor@example.com', password: 'long enough pw' });
    expectStatus(login, 200);
    user = admin.with({ token: login.body.accessToken });
    const me = await user.get('/api/identity/me');
    expectStatus(me, 200);
    userLabel = `user:${me.body.data.subjectId as string}`;
    for (let i = 0; i < 3; i++) {
      const r = await admin.post('/api/docs', { title: `d${i}` });
      expectStatus(r, 201);
      created.push(r.headers.get('x-service-correlation-id')!);
    }
    for (let i = 0; i < 2; i++) {
      const r = await user.get('/api/docs');
      expectStatus(r, 403);
      denied.push(r.headers.get('x-service-correlation-id')!);
    }
  });
  after(async () => {
    for (const s of sources) s.close();
    await server?.close();
  });

  it('filters by decision, reasonCode, actor and entity', async () => {
    const deny = await rowsOf({ decision: 'Deny' }, 2);
    assert.deepEqual(deny.map((r) => r.correlationId).sort(), [...denied].sort());
    for (const r of deny) {
      assert.equal(r.decision, 'Deny');
      assert.equal(r.reasonCode, 'ExposureBinding.RequiredGrantMissing');
      assert.equal(r.actor, userLabel);
      assert.equal(r.operationId, 'Entity.Doc.List');
      assert.equal(r.status, 403);
      assert.equal(typeof r.at, 'string');
    }
    const byReason = await rowsOf({ reasonCode: 'ExposureBinding.RequiredGrantMissing' }, 2);
    assert.equal(byReason.length, 2);
    const byActor = await rowsOf({ actor: userLabel }, 2);
    assert.ok(byActor.every((r) => r.actor === userLabel));
    assert.ok(denied.every((c) => byActor.some((r) => r.correlationId === c)));
    const creates = await rowsOf({ entity: 'Doc', decision: 'Allow' }, 3);
    assert.deepEqual(creates.map((r) => r.correlationId), created);
    assert.ok(creates.every((r) => r.operationId === 'Entity.Doc.Create' && r.reasonCode === 'Access.Allowed' && r.status === 201));
    assert.equal((await rowsOf({ entity: 'Nope' }, 0)).length, 0);
  });

  it('pages by cursor', async () => {
    await rowsOf({ entity: 'Doc' }, 5);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await admin.get(q({ entity: 'Doc' }, `&pageSize=2${cursor === undefined ? '' : `&cursor=${cursor}`}`));
      expectStatus(r, 200);
      assert.ok((r.body.data as Json[]).length <= 2);
      seen.push(...(r.body.data as Json[]).map((x) => x.correlationId as string));
      cursor = r.body.page.next as string | undefined;
      pages++;
    } while (cursor !== undefined && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...created, ...denied]);
  });

  it('refuses bad filters, cursors and non-admin callers', async () => {
    expectError(await admin.get(q({ bogus: 'x' })), 422, 'VALIDATION_FAILED', 'Filter.UnknownField', 'filter.bogus');
    expectError(await admin.get(q({ decision: 'Maybe' })), 422, 'VALIDATION_FAILED', 'Filter.InvalidValue', 'filter.decision');
    expectError(await admin.get(q({ since: 'yesterday' })), 422, 'VALIDATION_FAILED', 'Filter.InvalidValue', 'filter.since');
    expectError(await admin.get('/api/audit?cursor=zzz'), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    expectError(await user.get('/api/audit'), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.get('/api/audit/tail'), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await admin.with({ token: null }).get('/api/audit'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
  });

  it('tails new audit rows over SSE', async () => {
    const headers = { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': admin.scope.tenant!, 'x-service-project': admin.scope.project! };
    const got: Json[] = [];
    let wake: (() => void) | null = null;
    const es = new EventSource(`${server.url}/api/audit/tail`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    });
    sources.push(es);
    es.addEventListener('service.audit', (e) => {
      got.push({ id: e.lastEventId, ...(JSON.parse(e.data) as Json) });
      wake?.();
    });
    await new Promise<void>((resolve, reject) => {
      es.addEventListener('open', () => resolve());
      es.addEventListener('error', (e) => reject(new Error(`audit tail failed to open: ${String((e as { message?: string }).message)}`)));
    });
    const correlationId = `audit-tail-${randomUUID()}`;
    expectStatus(await user.get('/api/docs', { 'x-service-correlation-id': correlationId }), 403);
    const deadline = Date.now() + WAIT_MS;
    while (!got.some((r) => r.correlationId === correlationId)) {
      if (Date.now() > deadline) assert.fail(`no tail row for the request; got ${JSON.stringify(got.map((r) => r.operationId))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 100);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    const row = got.find((r) => r.correlationId === correlationId)!;
    assert.equal(row.decision, 'Deny');
    assert.equal(row.actor, userLabel);
    assert.match(row.id as string, /^a\d+$/);
    // Rows written before the client connected are not replayed.
    assert.ok(!got.some((r) => created.includes(r.correlationId as string)));
    es.close();
  });
});
