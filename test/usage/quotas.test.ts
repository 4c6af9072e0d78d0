/**
 * Quotas over HTTP on a real node (CONTRACT: Usage and quotas): CRUD and
 * its bad input, the four modes end to end, the 429's envelope and headers,
 * reservation with batches, a change applying from the next request, exact
 * counting under concurrency, and counters surviving a restart.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client, defineEntity, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import type { UsageEvent } from '../../runtime/services.js';
import WebSocket from 'ws';

interface Fresh { api: Client; projectId: string; tenant: string }

const nextMonthStart = (): string => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
};

forEachBackend('quotas', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  const overage: UsageEvent[] = [];

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
    // Keep a copy of the overage events quotas hand the usage sink (soft mode), and pass every event on to the real one.
    const services = server.node.services as { usage?: { record(e: UsageEvent): void; flush(): Promise<void> } };
    const real = services.usage!;
    services.usage = {
      record: (e: UsageEvent) => {
        if (e.kind.endsWith('.overage')) overage.push(e);
        real.record(e);
      },
      flush: () => real.flush(),
    };
  });
  after(async () => {
    await server?.close();
  });

  async function fresh(): Promise<Fresh> {
    const { client, projectId, tenant } = await bootstrapProject(server.url, server.adminToken, `q${randomUUID().slice(0, 8)}`);
    await defineEntity(client, { entityName: 'Note', fields: [{ name: 'title', type: 'String', nullable: false, unique: true }] });
    await defineEntity(client, { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: false }] });
    return { api: client, projectId, tenant };
  }

  async function quota(f: Fresh, body: Record<string, unknown>): Promise<string> {
    const r = await admin.post(`/api/Usage/${f.projectId}/quotas`, body);
    expectStatus(r, 201);
    return r.body.data.id;
  }

  async function used(f: Fresh, quotaId: string): Promise<number> {
    const r = await admin.get(`/api/Usage/${f.projectId}/summary`);
    expectStatus(r, 200);
    const row = r.body.data.find((q: { quotaId: string }) => q.quotaId === quotaId);
    assert.ok(row, 'quota in summary');
    return row.used;
  }

  /** Rows of the entity, read as the admin (reads count toward read quotas only; these tests set none where rows() is used with one). */
  async function rows(f: Fresh, entity = 'notes'): Promise<number> {
    const listed = await f.api.get(`/api/${entity}?pageSize=200`);
    expectStatus(listed, 200);
    return listed.body.data.length;
  }

  const note = (f: Fresh, title = `n${randomUUID().slice(0, 8)}`): Promise<Reply> => f.api.post('/api/notes', { title });

  function expectQuota429(r: Reply, kind: string, limit: number, usedBefore: number, reset: string): void {
    const e = expectError(r, 429, 'QUOTA_EXCEEDED', kind === 'read.monthly' ? 'Quota.ReadMonthly.Exhausted' : 'Quota.WriteMonthly.Exhausted');
    assert.equal((e as { retryable?: boolean }).retryable, false);
    assert.equal(r.headers.get('x-service-quota-kind'), kind);
    assert.equal(r.headers.get('x-service-quota-limit'), String(limit));
    assert.equal(r.headers.get('x-service-quota-used'), String(usedBefore));
    assert.equal(r.headers.get('x-service-quota-reset'), reset);
  }

  it('creates, lists, replaces, patches (by id with scope headers) and deletes a quota', async () => {
    const f = await fresh();
    const created = await admin.post(`/api/Usage/${f.projectId}/quotas`, { kind: 'write.monthly', limit: 10, mode: 'hard' });
    expectStatus(created, 201);
    const q = created.body.data;
    assert.equal(q.kind, 'write.monthly');
    assert.equal(q.mode, 'hard');
    assert.equal(q.state, 'active');
    assert.equal(q.limit, 10);
    assert.equal(q.window, 'calendar-month');
    assert.deepEqual(q.dimensions, {});
    assert.match(q.id, /^[0-9a-f-]{36}$/);

    const listed = await admin.get(`/api/Usage/${f.projectId}/quotas`);
    expectStatus(listed, 200);
    assert.deepEqual(listed.body.data.map((x: { id: string; limit: number }) => [x.id, x.limit]), [[q.id, 10]]);

    const put = await admin.put(`/api/Usage/${f.projectId}/quotas/${q.id}`, { kind: 'read.monthly', limit: 7, mode: 'soft', window: 'rolling-24h', dimensions: { entity: 'Note' } });
    expectStatus(put, 200);
    assert.equal(put.body.data.kind, 'read.monthly');
    assert.equal(put.body.data.window, 'rolling-24h');
    assert.deepEqual(put.body.data.dimensions, { entity: 'Note' });

    const patched = await f.api.patch(`/api/usage/quotas/${q.id}`, { limit: 3 });
    expectStatus(patched, 200);
    assert.equal(patched.body.data.limit, 3);
    assert.equal(patched.body.data.mode, 'soft', 'a PATCH keeps the fields it does not name');
    assert.equal(patched.body.data.window, 'rolling-24h');

    // Another project's scope headers do not reach this quota.
    const other = await fresh();
    expectError(await other.api.patch(`/api/usage/quotas/${q.id}`, { limit: 1 }), 404, 'NOT_FOUND', 'Quota.NotFound');
    expectError(await admin.put(`/api/Usage/${other.projectId}/quotas/${q.id}`, { kind: 'read.monthly', limit: 1, mode: 'hard' }), 404, 'NOT_FOUND', 'Quota.NotFound');

    const del = await admin.delete(`/api/Usage/${f.projectId}/quotas/${q.id}`);
    assert.ok(del.status === 204 || del.status === 200, `delete answered ${del.status}`);
    assert.deepEqual((await admin.get(`/api/Usage/${f.projectId}/quotas`)).body.data, []);
    expectError(await admin.delete(`/api/Usage/${f.projectId}/quotas/${q.id}`), 404, 'NOT_FOUND', 'Quota.NotFound');
  });

  it('refuses bad quota input with 422 naming the field, and a project user with 403', async () => {
    const f = await fresh();
    const path = `/api/Usage/${f.projectId}/quotas`;
    const base = { kind: 'write.monthly', limit: 5, mode: 'hard' };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...base, kind: 'writes.yearly' }, 'kind', 'Quota.UnknownKind'],
      [{ ...base, kind: undefined }, 'kind', 'Quota.UnknownKind'],
      [{ ...base, mode: 'strict' }, 'mode', 'Quota.UnknownMode'],
      [{ ...base, window: 'fortnight' }, 'window', 'Quota.UnknownWindow'],
      [{ ...base, window: 'rolling-0h' }, 'window', 'Quota.UnknownWindow'],
      [{ ...base, window: 'rolling-400d' }, 'window', 'Quota.UnknownWindow'],
      [{ ...base, limit: -1 }, 'limit', 'Quota.InvalidLimit'],
      [{ ...base, limit: 1.5 }, 'limit', 'Quota.InvalidLimit'],
      [{ ...base, limit: '10' }, 'limit', 'Quota.InvalidLimit'],
      [{ ...base, dimensions: { entity: 1 } }, 'dimensions', 'Quota.InvalidDimensions'],
      [{ ...base, dimensions: ['entity'] }, 'dimensions', 'Quota.InvalidDimensions'],
      [{ ...base, dimensions: 'entity=Note' }, 'dimensions', 'Quota.InvalidDimensions'],
      [{ ...base, dimensions: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'])) }, 'dimensions', 'Quota.InvalidDimensions'],
      [{ ...base, dimensions: { ['k'.repeat(129)]: 'v' } }, 'dimensions', 'Quota.InvalidDimensions'],
      [{ ...base, limit: 2 ** 53 }, 'limit', 'Quota.InvalidLimit'],
      [{ ...base, mode: undefined }, 'mode', 'Quota.UnknownMode'],
      [{ ...base, window: 7 }, 'window', 'Quota.UnknownWindow'],
    ];
    for (const [body, field, reason] of cases) {
      expectError(await admin.post(path, body), 422, 'VALIDATION_FAILED', reason, field);
    }
    assert.deepEqual((await admin.get(path)).body.data, [], 'nothing half-written');
    const id = await quota(f, { ...base, window: 'rolling-30m' });
    expectError(await admin.put(`${path}/${id}`, { ...base, mode: 'eventually' }), 422, 'VALIDATION_FAILED', 'Quota.UnknownMode', 'mode');
    expectError(await f.api.patch(`/api/usage/quotas/${id}`, { limit: -3 }), 422, 'VALIDATION_FAILED', 'Quota.InvalidLimit', 'limit');
    expectError(await f.api.patch(`/api/usage/quotas/${id}`, { kind: 'reads' }), 422, 'VALIDATION_FAILED', 'Quota.UnknownKind', 'kind');
    expectError(await f.api.patch(`/api/usage/quotas/${id}`, { window: 'rolling-9999d' }), 422, 'VALIDATION_FAILED', 'Quota.UnknownWindow', 'window');
    expectError(await f.api.patch(`/api/usage/quotas/${id}`, ['limit']), 422, 'VALIDATION_FAILED', 'Quota.InvalidBody');
    // A null field of a PATCH leaves it as it is; a null window or dimensions of a POST takes the default.
    const kept = await f.api.patch(`/api/usage/quotas/${id}`, { mode: null, limit: 6 });
    expectStatus(kept, 200);
    assert.deepEqual([kept.body.data.mode, kept.body.data.limit, kept.body.data.window], ['hard', 6, 'rolling-30m']);
    expectStatus(await f.api.patch(`/api/usage/quotas/${id}`, { limit: 5 }), 200);

    const anonymous = f.api.with({ token: null });
    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    expectStatus(await anonymous.post('/api/identity/register', { email, password: 'correct horse 42' }), 201);
    const login = await anonymous.post('/api/identity/login', { email, password: 'correct horse 42' });
    expectStatus(login, 200);
    const user = f.api.with({ token: login.body.accessToken });
    expectError(await user.post(path, base), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.patch(`/api/usage/quotas/${id}`, { limit: 100 }), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.delete(`${path}/${id}`), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    assert.equal((await admin.get(path)).body.data[0].limit, 5);
  });

  it('hard write quota: the request that would pass the limit gets the 429 and writes no row', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'write.monthly', limit: 2, mode: 'hard' });
    expectStatus(await note(f, 'a'), 201);
    expectStatus(await note(f, 'b'), 201);
    const refused = await note(f, 'c');
    expectQuota429(refused, 'write.monthly', 2, 2, nextMonthStart());
    assert.equal(await rows(f), 2);
    assert.equal((await f.api.get('/api/notes?filter=' + encodeURIComponent(JSON.stringify({ title: { eq: 'c' } })))).body.data.length, 0);
    assert.equal(await used(f, id), 2);
    // Refused operations consumed nothing: still exactly at the limit.
    expectQuota429(await note(f, 'd'), 'write.monthly', 2, 2, nextMonthStart());
    // Reads and control-plane calls are not writes.
    expectStatus(await f.api.get('/api/notes'), 200);
  });

  it('hard read quota: reads count 1 each (list, read, count), writes do not; the reset is the next window start', async () => {
    const f = await fresh();
    const created = await note(f);
    expectStatus(created, 201);
    const id = await quota(f, { kind: 'read.monthly', limit: 3, mode: 'hard', window: 'hour' });
    expectStatus(await f.api.get('/api/notes'), 200);
    expectStatus(await f.api.get(`/api/notes/${created.body.data.id}`), 200);
    expectStatus(await f.api.get('/api/notes/count'), 200);
    const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    expectQuota429(await f.api.get('/api/notes'), 'read.monthly', 3, 3, new Date(hourStart + 3_600_000).toISOString());
    expectStatus(await note(f), 201);
    assert.equal(await used(f, id), 3);
  });

  it('a refused operation (401, 403, 422) consumes nothing', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'write.monthly', limit: 1, mode: 'hard' });
    expectStatus(await f.api.post('/api/notes', {}), 422);
    expectStatus(await f.api.with({ token: 'not-a-token' }).post('/api/notes', { title: 'x' }), 401);
    assert.equal(await used(f, id), 0);
    expectStatus(await note(f), 201);
    assert.equal(await used(f, id), 1);
  });

  it('soft: allowed beyond the limit, with an overage event of the units beyond it', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'write.monthly', limit: 2, mode: 'soft' });
    expectStatus(await note(f), 201);
    expectStatus(await f.api.post('/api/notes/batch', { items: [{ title: 's1' }, { title: 's2' }, { title: 's3' }] }), 201);
    expectStatus(await note(f), 201);
    assert.equal(await rows(f), 5);
    assert.equal(await used(f, id), 5);
    const mine = overage.filter((e) => e.projectId === f.projectId);
    assert.deepEqual(mine.map((e) => [e.kind, e.quantity]), [['write.monthly.overage', 2], ['write.monthly.overage', 1]]);
    assert.equal(mine[0]!.dimensions?.quotaId, id);
    assert.equal(mine[0]!.operationId, 'Entity.Note.BatchCreate');
  });

  it('monitor: allowed, usage counted, no overage event', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'write.monthly', limit: 1, mode: 'monitor' });
    for (let i = 0; i < 3; i++) expectStatus(await note(f), 201);
    assert.equal(await used(f, id), 3);
    assert.equal(overage.filter((e) => e.projectId === f.projectId).length, 0);
  });

  it('reservation: a batch that does not fit is refused whole; a failed operation releases its units', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'write.monthly', limit: 5, mode: 'reservation' });
    expectStatus(await f.api.post('/api/notes/batch', { items: [{ title: 'r1' }, { title: 'r2' }, { title: 'r3' }] }), 201);
    const whole = await f.api.post('/api/notes/batch', { items: [{ title: 'r4' }, { title: 'r5' }, { title: 'r6' }] });
    expectQuota429(whole, 'write.monthly', 5, 3, nextMonthStart());
    assert.equal(await rows(f), 3, 'nothing of the refused batch was written');
    // Fits (2 of 2 left) but fails in execution (a duplicate title): its reservation is released.
    expectStatus(await f.api.post('/api/notes/batch', { items: [{ title: 'r1' }, { title: 'r7' }] }), 409);
    assert.equal(await used(f, id), 3);
    expectStatus(await f.api.post('/api/notes/batch', { items: [{ title: 'r8' }, { title: 'r9' }] }), 201);
    assert.equal(await used(f, id), 5);
    expectQuota429(await note(f), 'write.monthly', 5, 5, nextMonthStart());
    // A batch delete reserves its ids and counts the rows it deleted.
    await admin.patch(`/api/Usage/${f.projectId}/quotas/${id}`, { limit: 8 });
    const listed = (await f.api.get('/api/notes')).body.data as Array<{ id: string }>;
    const del = await f.api.post('/api/notes/batch/delete', { ids: [listed[0]!.id, randomUUID()] });
    expectStatus(del, 200);
    assert.equal(await used(f, id), 6);
  });

  it('dimensions narrow a quota to one entity', async () => {
    const f = await fresh();
    await quota(f, { kind: 'write.monthly', limit: 0, mode: 'hard', dimensions: { entity: 'Tag' } });
    expectStatus(await note(f), 201);
    expectQuota429(await f.api.post('/api/tags', { label: 'x' }), 'write.monthly', 0, 0, nextMonthStart());
  });

  it('a quota created, changed or deleted applies from the next request', async () => {
    const f = await fresh();
    expectStatus(await note(f), 201);
    // The write before the quota existed is metered (a usage event of the window) and counts against it.
    const deadline = Date.now() + 10_000;
    while ((await admin.get(`/api/Usage/${f.projectId}/events?kind=write.monthly`)).body.data.length < 1) {
      assert.ok(Date.now() < deadline, 'the earlier write was metered');
      await new Promise((r) => setTimeout(r, 50));
    }
    const id = await quota(f, { kind: 'write.monthly', limit: 2, mode: 'hard' });
    expectStatus(await note(f), 201);
    expectStatus(await note(f), 429);
    expectStatus(await f.api.patch(`/api/usage/quotas/${id}`, { limit: 3 }), 200);
    expectStatus(await note(f), 201);
    expectStatus(await note(f), 429);
    expectStatus(await f.api.patch(`/api/usage/quotas/${id}`, { mode: 'monitor' }), 200);
    expectStatus(await note(f), 201);
    expectStatus(await admin.delete(`/api/Usage/${f.projectId}/quotas/${id}`), 204);
    expectStatus(await note(f), 201);
    await quota(f, { kind: 'write.monthly', limit: 0, mode: 'hard' });
    expectStatus(await note(f), 429);
  });

  /** Opens an SSE subscription as the admin; answers the response (its body left open) and how to end it. */
  async function openSse(f: Fresh, entity = 'Note'): Promise<{ res: Response; end(): Promise<void> }> {
    const headers = { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': f.tenant, 'x-service-project': 'app' };
    const abort = new AbortController();
    const res = await fetch(`${server.url}/api/realtime/sse?entity=${entity}`, { headers, signal: abort.signal });
    return { res, end: async () => { abort.abort(); await res.body?.cancel().catch(() => {}); } };
  }

  async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('realtime.subscriptions: a hard quota bounds the open subscriptions (one mechanism with the hub), a freed slot admits again', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'realtime.subscriptions', limit: 2, mode: 'hard' });
    const a = await openSse(f);
    const b = await openSse(f, 'Tag');
    assert.deepEqual([a.res.status, b.res.status], [200, 200]);
    assert.equal(await used(f, id), 2, 'summary: the subscriptions open now');
    const before = Date.now();
    const third = await openSse(f);
    assert.equal(third.res.status, 429);
    const body = await third.res.json() as { error: { code: string; reasonCode: string; retryable: boolean; correlationId: string } };
    assert.deepEqual([body.error.code, body.error.reasonCode, body.error.retryable], ['QUOTA_EXCEEDED', 'Quota.RealtimeSubscriptions.Exhausted', true]);
    assert.equal(body.error.correlationId, third.res.headers.get('x-service-correlation-id'));
    assert.equal(third.res.headers.get('x-service-quota-kind'), 'realtime.subscriptions');
    assert.equal(third.res.headers.get('x-service-quota-limit'), '2');
    assert.equal(third.res.headers.get('x-service-quota-used'), '2');
    // A slot frees as soon as a subscription ends: the reset is "now".
    const reset = Date.parse(third.res.headers.get('x-service-quota-reset') ?? '');
    assert.ok(reset >= before - 1000 && reset <= Date.now() + 1000, `reset ${third.res.headers.get('x-service-quota-reset')}`);

    await a.end();
    await waitFor('the slot to be released', async () => (await used(f, id)) === 1);
    const again = await openSse(f);
    assert.equal(again.res.status, 200);
    // Raising the limit applies from the next subscribe.
    expectStatus(await f.api.patch(`/api/usage/quotas/${id}`, { limit: 3 }), 200);
    const fourth = await openSse(f);
    assert.equal(fourth.res.status, 200);
    assert.equal(await used(f, id), 3);
    // The WebSocket handshake is held to the same bound (the realtime route checks it before upgrading).
    const refusedWs = await new Promise<{ status: number; kind: string | undefined }>((resolve, reject) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/realtime`, {
        headers: { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': f.tenant, 'x-service-project': 'app' },
      });
      ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, kind: res.headers['x-service-quota-kind'] as string | undefined }));
      ws.on('open', () => { ws.terminate(); reject(new Error('the handshake was accepted past the quota')); });
      ws.on('error', () => {});
    });
    assert.deepEqual(refusedWs, { status: 429, kind: 'realtime.subscriptions' });
    await Promise.all([b.end(), again.end(), fourth.end()]);
  });

  it('realtime.subscriptions: a soft quota admits past its limit and charges each extra subscription as 1 overage unit', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'realtime.subscriptions', limit: 1, mode: 'soft' });
    const a = await openSse(f);
    const b = await openSse(f);
    const c = await openSse(f);
    assert.deepEqual([a.res.status, b.res.status, c.res.status], [200, 200, 200]);
    const mine = overage.filter((e) => e.projectId === f.projectId && e.kind === 'realtime.subscriptions.overage');
    assert.deepEqual(mine.map((e) => [e.quantity, e.dimensions?.quotaId, e.operationId]), [[1, id, 'Realtime.Sse'], [1, id, 'Realtime.Sse']]);
    assert.equal(await used(f, id), 3);
    await Promise.all([a.end(), b.end(), c.end()]);
  });

  it('realtime.subscriptions takes no dimensions (it bounds the project as a whole)', async () => {
    const f = await fresh();
    const r = await admin.post(`/api/Usage/${f.projectId}/quotas`, { kind: 'realtime.subscriptions', limit: 2, mode: 'hard', dimensions: { entity: 'Note' } });
    expectError(r, 422, 'VALIDATION_FAILED', 'Quota.InvalidDimensions', 'dimensions');
  });

  it('counts exactly under concurrency: never more successes than the limit', async () => {
    const f = await fresh();
    const id = await quota(f, { kind: 'write.monthly', limit: 5, mode: 'hard' });
    const replies = await Promise.all(Array.from({ length: 20 }, () => note(f)));
    assert.equal(replies.filter((r) => r.status === 201).length, 5);
    assert.equal(replies.filter((r) => r.status === 429).length, 15);
    assert.equal(await rows(f), 5);
    assert.equal(await used(f, id), 5);
  });
});

forEachBackend('quota counters across a restart', (backend: Backend) => {
  it('a restarted node starts from the persisted count', async () => {
    const first = await startServer({ backend, persistent: true });
    let second: TestServer | null = null;
    try {
      const admin = new Client(first.url, { token: first.adminToken });
      const { client, projectId } = await bootstrapProject(first.url, first.adminToken);
      await defineEntity(client, { entityName: 'Note', fields: [{ name: 'title', type: 'String', nullable: false }] });
      expectStatus(await admin.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 3, mode: 'hard' }), 201);
      for (let i = 0; i < 2; i++) expectStatus(await client.post('/api/notes', { title: `t${i}` }), 201);
      await first.stop();
      second = await startServer({ backend, reuse: { dataDir: first.dataDir, databaseUrl: first.databaseUrl } });
      const again = new Client(second.url, { token: second.adminToken, tenant: client.scope.tenant!, project: client.scope.project! });
      expectStatus(await again.post('/api/notes', { title: 'last' }), 201);
      const refused = await again.post('/api/notes', { title: 'over' });
      expectStatus(refused, 429);
      assert.equal(refused.headers.get('x-service-quota-used'), '3');
    } finally {
      await second?.stop();
      await first.close();
    }
  });
});
