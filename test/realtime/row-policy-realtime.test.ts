/**
 * Realtime under a row policy (CONTRACT: Row policy and field masks): the
 * subscriber's read policy is ANDed into the server-side filter, so a
 * WebSocket or SSE subscriber never receives a change of a row it cannot
 * read, and masked fields never appear in `changedFields`.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { collectBody } from '../support/stream-body.js';
import { expectStatus, type Json } from '../support/expect.js';

const OWN = { owner: { eq: { $actor: 'subjectId' } } };

/** Messages from one WebSocket, with a wait for a predicate. */
async function openWs(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket; messages: Json[]; waitFor(p: (m: Json) => boolean, what: string): Promise<Json> }> {
  const ws = new WebSocket(url, [], { headers });
  const messages: Json[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString()) as Json));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waitFor = async (p: (m: Json) => boolean, what: string): Promise<Json> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const hit = messages.find(p);
      if (hit !== undefined) return hit;
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { ws, messages, waitFor };
}

forEachBackend('realtime under a row policy', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let headers: Record<string, string>;

  const register = async (): Promise<{ client: Client; token: string; subjectId: string }> => {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    const client = anon.with({ token: login.body.accessToken });
    const me = await client.get('/api/identity/me');
    return { client, token: login.body.accessToken as string, subjectId: me.body.data.subjectId as string };
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    headers = { 'x-service-tenant': p.tenant, 'x-service-project': p.project };
    await defineEntity(admin, {
      entityName: 'Order',
      fields: [{ name: 'owner', type: 'ID', nullable: false }, { name: 'total', type: 'Int', nullable: true }, { name: 'region', type: 'String', nullable: true }],
    });
    for (const body of [
      { role: 'authenticated', grant: 'entity:Order:read', rowFilter: OWN, fields: ['owner', 'region'] },
      { role: 'authenticated', grant: 'entity:Order:insert', check: OWN },
      { role: 'authenticated', grant: 'entity:Order:update', rowFilter: OWN },
    ]) expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, body), 201);
  });
  after(async () => {
    await server?.close();
  });

  it('WebSocket: a subscriber never receives the other user\'s change; masked fields leave changedFields', async () => {
    const a = await register();
    const b = await register();
    const sub = await openWs(`${server.url.replace('http', 'ws')}/api/realtime`, { ...headers, authorization: `Bearer ${a.token}` });
    try {
      sub.ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity: 'Order' }));
      assert.equal((await sub.waitFor((m) => m.id === 's', 'subscribe reply')).type, 'subscribed');
      const theirs = await b.client.post('/api/orders', { owner: b.subjectId, total: 2, region: 'us' });
      expectStatus(theirs, 201);
      expectStatus(await b.client.patch(`/api/orders/${theirs.body.data.id}`, { total: 3 }), 200);
      const mine = await a.client.post('/api/orders', { owner: a.subjectId, total: 1, region: 'eu' });
      expectStatus(mine, 201);
      const upd = await a.client.patch(`/api/orders/${mine.body.data.id}`, { total: 5, region: 'apac' });
      expectStatus(upd, 200);
      const created = await sub.waitFor((m) => m.type === 'change' && m.kind === 'created', 'own created change');
      assert.equal(created.entityId, mine.body.data.id);
      assert.equal(created.changedFields.includes('total'), false);
      assert.ok(created.changedFields.includes('region'));
      const updated = await sub.waitFor((m) => m.type === 'change' && m.kind === 'updated', 'own updated change');
      assert.deepEqual(updated.changedFields, ['region']);
      // Changes are delivered in log order: B's two writes came first, so they would have arrived by now.
      assert.ok(!sub.messages.some((m) => m.entityId === theirs.body.data.id), 'the other user\'s change was delivered');
      assert.ok(!JSON.stringify(sub.messages).includes('total'));
    } finally {
      sub.ws.terminate();
    }
  });

  it('SSE: the same row filter applies to the stream', async () => {
    const a = await register();
    const b = await register();
    const ctl = new AbortController();
    const res = await fetch(`${server.url}/api/realtime/sse?entity=Order`, { headers: { ...headers, authorization: `Bearer ${a.token}` }, signal: ctl.signal });
    assert.equal(res.status, 200);
    const body = collectBody(res);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const theirs = await b.client.post('/api/orders', { owner: b.subjectId, total: 2 });
      expectStatus(theirs, 201);
      const mine = await a.client.post('/api/orders', { owner: a.subjectId, total: 1 });
      expectStatus(mine, 201);
      const deadline = Date.now() + 10_000;
      while (!body.text.includes(mine.body.data.id as string) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(body.text.includes(mine.body.data.id as string), `own change not delivered: ${body.text}`);
      assert.ok(!body.text.includes(theirs.body.data.id as string), 'the other user\'s change was delivered');
      assert.ok(!body.text.includes('"total"'));
    } finally {
      ctl.abort();
    }
  });
});
