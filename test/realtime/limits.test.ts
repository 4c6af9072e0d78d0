/**
 * Realtime subscription bounds besides the per-project quota: per
 * WebSocket connection, per actor (user) and distinct filters per project.
 * Each answers the project quota's 429 QUOTA_EXCEEDED shape with its own
 * reasonCode, so one user cannot take every slot of a project.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';
import { registerReader } from './reader.js';

const WAIT_MS = 10_000;

/** A WebSocket client: every message, and a wait for the reply to one subscribe. */
class Ws {
  readonly messages: Json[] = [];
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => this.messages.push(JSON.parse(d.toString()) as Json));
  }

  static open(url: string, headers: Record<string, string>): Promise<Ws> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Ws(ws)));
      ws.once('unexpected-response', (_q, res) => reject(Object.assign(new Error(`handshake ${res.statusCode}`), { statusCode: res.statusCode, headers: res.headers })));
      ws.once('error', reject);
    });
  }

  async reply(id: string): Promise<Json> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const m = this.messages.find((x) => (x.type === 'subscribed' || x.type === 'error') && x.id === id);
      if (m !== undefined) return m;
      if (Date.now() > deadline) assert.fail(`no reply to subscribe ${id}; got ${JSON.stringify(this.messages)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  send(m: unknown): void {
    this.ws.send(JSON.stringify(m));
  }

  async subscribe(id: string, filter?: unknown): Promise<Json> {
    this.send({ type: 'subscribe', id, entity: 'Order', ...(filter === undefined ? {} : { filter }) });
    return this.reply(id);
  }

  async unsubscribe(id: string): Promise<void> {
    this.send({ type: 'unsubscribe', id });
    const deadline = Date.now() + WAIT_MS;
    while (!this.messages.some((m) => m.type === 'unsubscribed' && m.id === id)) {
      if (Date.now() > deadline) assert.fail(`no unsubscribed for ${id}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const assertQuota = (m: Json, reasonCode: string, kind: string, limit: number, used: number): void => {
  assert.equal(m.type, 'error', JSON.stringify(m));
  assert.equal(m.status, 429);
  assert.equal(m.code, 'QUOTA_EXCEEDED');
  assert.equal(m.reasonCode, reasonCode);
  assert.equal(typeof m.correlationId, 'string');
  const { reset, ...rest } = m.quota as { reset: string };
  assert.deepEqual(rest, { kind, limit, used });
  // A concurrency bound frees a slot whenever a subscription ends: its reset is the current instant.
  assert.ok(Math.abs(Date.parse(reset) - Date.now()) < 60_000, `reset ${reset}`);
};

forEachBackend('realtime limits per connection, per actor and distinct filters', (backend) => {
  let server: TestServer;
  let wsUrl: string;
  const sockets: Ws[] = [];

  const newProject = async (): Promise<{ client: Client; projectId: string; headers: Record<string, string> }> => {
    const p = await bootstrapProject(server.url, server.adminToken, `l${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
    return { client: p.client, projectId: p.projectId, headers: { 'x-service-tenant': p.tenant, 'x-service-project': p.project } };
  };
  const open = async (headers: Record<string, string>, token: string): Promise<Ws> => {
    const c = await Ws.open(wsUrl, { ...headers, authorization: `Bearer ${token}` });
    sockets.push(c);
    return c;
  };
  /** A registered user holding entity:Order:read. */
  const reader = (p: { client: Client; projectId: string }): Promise<string> => registerReader(p);

  before(async () => {
    server = await startServer({
      backend,
      env: { REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT: '50', REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION: '3', REALTIME_MAX_SUBSCRIPTIONS_PER_ACTOR: '4', REALTIME_MAX_FILTERS_PER_PROJECT: '3' },
    });
    wsUrl = `${server.url.replace('http', 'ws')}/api/realtime`;
  });
  after(async () => {
    for (const s of sockets) s.ws.terminate();
    await server?.close();
  });

  it('per connection: a burst of subscribes gets exactly the bound, the rest 429 Quota.RealtimeSubscriptionsPerConnection; another connection is unaffected', async () => {
    const p = await newProject();
    const ws = await open(p.headers, server.adminToken);
    // Sent at once: the in-flight ones count too, so the burst cannot overshoot.
    for (let i = 0; i < 8; i++) ws.send({ type: 'subscribe', id: `b${i}`, entity: 'Order' });
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => ws.reply(`b${i}`)));
    assert.equal(replies.filter((m) => m.type === 'subscribed').length, 3);
    const refused = replies.filter((m) => m.type === 'error');
    assert.equal(refused.length, 5);
    for (const m of refused) assertQuota(m, 'Quota.RealtimeSubscriptionsPerConnection', 'realtime.subscriptions', 3, 3);
    const other = await open(p.headers, server.adminToken);
    assert.equal((await other.subscribe('o1')).type, 'subscribed');
    // Unsubscribing frees a slot on the connection.
    const first = replies.find((m) => m.type === 'subscribed')!;
    await ws.unsubscribe(first.id);
    assert.equal((await ws.subscribe('again')).type, 'subscribed');
  });

  it('per actor: one user is stopped at its bound (WebSocket, SSE and handshake); other users and the admin still subscribe', async () => {
    const p = await newProject();
    const alice = await reader(p);
    const bob = await reader(p);
    const a1 = await open(p.headers, alice);
    const a2 = await open(p.headers, alice);
    for (const id of ['1', '2', '3']) assert.equal((await a1.subscribe(id)).type, 'subscribed');
    assert.equal((await a2.subscribe('4')).type, 'subscribed');
    assertQuota(await a2.subscribe('5'), 'Quota.RealtimeSubscriptionsPerActor', 'realtime.subscriptions', 4, 4);
    const sse = await fetch(`${server.url}/api/realtime/sse?entity=Order`, { headers: { ...p.headers, authorization: `Bearer ${alice}` } });
    assert.equal(sse.status, 429);
    assert.equal(((await sse.json()) as Json).error.reasonCode, 'Quota.RealtimeSubscriptionsPerActor');
    assert.equal(sse.headers.get('x-service-quota-limit'), '4');
    assert.equal(sse.headers.get('x-service-quota-used'), '4');
    await assert.rejects(Ws.open(wsUrl, { ...p.headers, authorization: `Bearer ${alice}` }), (e: { statusCode?: number }) => e.statusCode === 429);
    // The project still has room: another user and the admin are not blocked by alice.
    const b = await open(p.headers, bob);
    assert.equal((await b.subscribe('b1')).type, 'subscribed');
    const admin = await open(p.headers, server.adminToken);
    assert.equal((await admin.subscribe('ad')).type, 'subscribed');
    // Closing one of alice's connections gives her slots back.
    a1.ws.terminate();
    const deadline = Date.now() + WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      const r = await a2.subscribe(`after${attempt}`);
      if (r.type === 'subscribed') break;
      if (Date.now() > deadline) assert.fail(`alice's slots were not freed: ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  });

  it('distinct filters per project: a new filter past the bound is 429 Quota.RealtimeFilters; a shared filter or none still subscribes', async () => {
    const p = await newProject();
    const c1 = await open(p.headers, server.adminToken);
    const c2 = await open(p.headers, server.adminToken);
    const c3 = await open(p.headers, server.adminToken);
    for (const s of ['a', 'b', 'c']) assert.equal((await c1.subscribe(s, { status: { eq: s } })).type, 'subscribed');
    assertQuota(await c2.subscribe('d', { status: { eq: 'd' } }), 'Quota.RealtimeFilters', 'realtime.filters.distinct', 3, 3);
    const sse = await fetch(`${server.url}/api/realtime/sse?entity=Order&filter=${encodeURIComponent('{"status":{"eq":"e"}}')}`, { headers: { ...p.headers, authorization: `Bearer ${server.adminToken}` } });
    assert.equal(sse.status, 429);
    assert.equal(((await sse.json()) as Json).error.reasonCode, 'Quota.RealtimeFilters');
    // The same filter (shared column in every check) and no filter are not new filters.
    assert.equal((await c2.subscribe('a2', { status: { eq: 'a' } })).type, 'subscribed');
    assert.equal((await c2.subscribe('all')).type, 'subscribed');
    // A filter is freed when its last subscriber leaves, not before.
    await c1.unsubscribe('a');
    assertQuota(await c3.subscribe('d', { status: { eq: 'd' } }), 'Quota.RealtimeFilters', 'realtime.filters.distinct', 3, 3);
    await c2.unsubscribe('a2');
    assert.equal((await c3.subscribe('d2', { status: { eq: 'd' } })).type, 'subscribed');
    // Deliveries still follow each filter.
    const r = await p.client.post('/api/orders', { status: 'd' });
    expectStatus(r, 201);
    const deadline = Date.now() + WAIT_MS;
    while (!c3.messages.some((m) => m.type === 'change' && m.entityId === r.body.data.id) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
    assert.ok(c3.messages.some((m) => m.type === 'change' && m.subscriptionId === 'd2'), 'the new filter is delivered');
    assert.ok(!c1.messages.some((m) => m.type === 'change' && m.entityId === r.body.data.id), 'a non-matching filter got the change');
  });
});
