/**
 * Session revocation holds: across a restart of the node on the same data
 * (PGlite on disk, PostgreSQL), and for live realtime connections, which the
 * revocation closes (WebSocket 4401 with a final error message) so that no
 * further change reaches them.
 */
import { collectBody } from '../support/stream-body.js';
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';
import { reapPlinthProcesses, startPlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase, forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { SESSION_REVOKED_CLOSE_CODE } from '../../runtime/realtime/session-connections.js';

const PASSWORD = 'long enough pw';

async function userSession(client: Client): Promise<{ token: string; sessionId: string; subjectId: string; anon: Client }> {
  const anon = client.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  const reg = await anon.post('/api/identity/register', { email, password: PASSWORD });
  expectStatus(reg, 201);
  const login = await anon.post('/api/identity/login', { email, password: PASSWORD });
  expectStatus(login, 200);
  return { token: login.body.accessToken, sessionId: login.body.sessionId, subjectId: reg.body.data.subjectId, anon };
}

forEachBackend('session revocation', (backend: Backend) => {
  after(async () => { await reapPlinthProcesses(); });

  it('a revoked session\'s access token stays refused after the node restarts on the same data', async () => {
    const adminToken = `adm-${randomUUID()}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-revoke-'));
    const db = backend === 'postgres' ? await createTestDatabase() : null;
    // Separate processes: nothing the first node kept in memory survives into the second.
    const start = () => startPlinthProcess({
      adminToken, nodeId: `revoke-${backend}`, databaseUrl: db?.url ?? null, env: db === null ? { DATA_DIR: dataDir } : {},
    });
    try {
      const first = await start();
      const p = await bootstrapProject(first.url, adminToken);
      const u = await userSession(p.client);
      const asUser = u.anon.with({ token: u.token });
      expectStatus(await asUser.get('/api/identity/me'), 200);
      expectStatus(await asUser.delete(`/api/identity/sessions/${u.sessionId}`), 204);
      expectError(await asUser.get('/api/identity/me'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
      assert.equal(await first.terminate(), 0);

      const second = await start();
      const again = new Client(second.url, { ...u.anon.scope, token: u.token });
      expectError(await again.get('/api/identity/me'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
      // the node itself is fine: a new session of the same project works
      const v = await userSession(new Client(second.url, { token: adminToken, tenant: p.tenant, project: p.project }));
      expectStatus(await v.anon.with({ token: v.token }).get('/api/identity/me'), 200);
      await second.terminate();
    } finally {
      await reapPlinthProcesses();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  let server: TestServer;
  before(async () => { server = await startServer({ backend }); });
  after(async () => { await server?.close(); });

  it('revoking a session closes its live WebSocket (4401, final error) and no further change arrives', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, `rv${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
    expectStatus(await p.client.post(`/api/projects/${p.projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read' }), 201);
    const u = await userSession(p.client);

    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/realtime`, { headers: { authorization: `Bearer ${u.token}`, 'x-service-tenant': p.tenant, 'x-service-project': p.project } });
    const inbox: Json[] = [];
    let wake: () => void = () => {};
    ws.on('message', (d) => { inbox.push(JSON.parse(d.toString()) as Json); wake(); });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const waitFor = async (pred: (m: Json) => boolean, what: string): Promise<Json> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const hit = inbox.find(pred);
        if (hit !== undefined) return hit;
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(inbox)}`);
        await new Promise<void>((r) => { wake = r; setTimeout(r, 200); });
      }
    };
    try {
      ws.send(JSON.stringify({ type: 'subscribe', id: 'o', entity: 'Order' }));
      await waitFor((m) => m.type === 'subscribed', 'subscribed');
      const before = await p.client.post('/api/orders', { status: 'open' });
      expectStatus(before, 201);
      await waitFor((m) => m.type === 'change' && m.entityId === before.body.data.id, 'change before the revocation');

      // the admin revokes the user's session
      expectStatus(await p.client.delete(`/api/identity/sessions/${u.sessionId}`), 204);
      const end = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
      assert.ok(end !== null, `the WebSocket stayed open after its session was revoked: ${JSON.stringify(inbox)}`);
      assert.equal(end.code, SESSION_REVOKED_CLOSE_CODE);
      const last = inbox.at(-1)!;
      assert.equal(last.type, 'error');
      assert.equal(last.code, 'UNAUTHORIZED');
      assert.equal(last.reasonCode, 'Identity.SessionRevoked');

      const count = inbox.length;
      expectStatus(await p.client.post('/api/orders', { status: 'later' }), 201);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(inbox.length, count, 'a message arrived after the revocation');
    } finally {
      ws.terminate();
    }
  });

  it('revoking a session ends its SSE stream with a final error event', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, `rs${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
    expectStatus(await p.client.post(`/api/projects/${p.projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read' }), 201);
    const u = await userSession(p.client);
    const abort = new AbortController();
    const res = await fetch(`${server.url}/api/realtime/sse?entity=Order`, {
      headers: { authorization: `Bearer ${u.token}`, 'x-service-tenant': p.tenant, 'x-service-project': p.project }, signal: abort.signal,
    });
    assert.equal(res.status, 200);
    const stream = collectBody(res);
    try {
      const order = await p.client.post('/api/orders', { status: 'open' });
      const deadline = Date.now() + 10_000;
      while (!stream.text.includes(order.body.data.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(stream.text.includes(order.body.data.id), `no change before the revocation: ${stream.text}`);
      expectStatus(await p.client.delete(`/api/identity/sessions/${u.sessionId}`), 204);
      const done = await Promise.race([stream.ended, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
      // true: a clean end; false: the socket closed under the reader. Either way the stream is over.
      assert.notEqual(done, null, `the SSE stream stayed open after its session was revoked: ${JSON.stringify(stream.text)}`);
      assert.match(stream.text, /event: error\ndata: .*Identity\.SessionRevoked/);
    } finally {
      abort.abort();
    }
  });
});
