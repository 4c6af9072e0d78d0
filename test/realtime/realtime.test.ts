/**
 * Realtime against a real node: WebSocket (`ws`) and SSE (`eventsource`)
 * clients receive change messages (field names, never values) for rows
 * matching their filter, nothing for others; grants, auth paths, quota and
 * bad filters answer like REST.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';
import { SLOW_CONSUMER_CLOSE_CODE } from '../../adapters/realtime/connection.js';

const WAIT_MS = 10_000;
const CHANGE_KEYS = ['changedFields', 'correlationId', 'entity', 'entityId', 'eventId', 'kind', 'occurredAt', 'publicationVersion', 'subscriptionId', 'type'];

/** Messages received by one client, with a wait that wakes on each arrival. */
class Inbox {
  readonly messages: Json[] = [];
  private waiters: Array<() => void> = [];

  push(m: Json): void {
    this.messages.push(m);
    for (const w of this.waiters.splice(0)) w();
  }

  async waitFor(pred: (m: Json) => boolean, what: string): Promise<Json> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const hit = this.messages.find(pred);
      if (hit !== undefined) return hit;
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

class WsClient {
  readonly inbox = new Inbox();
  readonly raw: string[] = [];
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = data.toString();
      this.raw.push(text);
      this.inbox.push(JSON.parse(text) as Json);
    });
  }

  static open(url: string, opts: { protocols?: string[]; headers?: Record<string, string> } = {}): Promise<WsClient> {
    const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers ?? {} });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new WsClient(ws)));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`handshake ${res.statusCode}`), { statusCode: res.statusCode, headers: res.headers })));
      ws.once('error', reject);
    });
  }

  async subscribe(id: string, entity: string, filter?: unknown): Promise<Json> {
    this.ws.send(JSON.stringify({ type: 'subscribe', id, entity, ...(filter === undefined ? {} : { filter }) }));
    return this.inbox.waitFor((m) => (m.type === 'subscribed' || m.type === 'error') && m.id === id, `reply to subscribe ${id}`);
  }

  close(): void {
    this.ws.terminate();
  }
}

forEachBackend('realtime', (backend: Backend) => {
  let server: TestServer;
  let wsUrl: string;
  const closers: Array<() => void> = [];

  /** A fresh project (quota is per project) with an Order entity. */
  const newProject = async (): Promise<{ client: Client; tenant: string; project: string; projectId: string; headers: Record<string, string> }> => {
    const p = await bootstrapProject(server.url, server.adminToken, `r${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }, { name: 'note', type: 'String', nullable: true }] });
    return { client: p.client, tenant: p.tenant, project: p.project, projectId: p.projectId, headers: { 'x-service-tenant': p.tenant, 'x-service-project': p.project } };
  };
  const createOrder = async (client: Client, status: string): Promise<string> => {
    const r = await client.post('/api/orders', { status, note: 'secret-note' });
    expectStatus(r, 201);
    return r.body.data.id as string;
  };
  const adminWs = async (headers: Record<string, string>): Promise<WsClient> => {
    const c = await WsClient.open(wsUrl, { headers: { ...headers, authorization: `Bearer ${server.adminToken}` } });
    closers.push(() => c.close());
    return c;
  };
  const userToken = async (client: Client): Promise<{ token: string; subjectId: string }> => {
    const anon = client.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const me = await anon.with({ token: login.body.accessToken }).get('/api/identity/me');
    return { token: login.body.accessToken as string, subjectId: me.body.data.subjectId as string };
  };

  before(async () => {
    server = await startServer({ backend, env: { REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT: '3' } });
    wsUrl = `${server.url.replace('http', 'ws')}/api/realtime`;
  });
  after(async () => {
    for (const c of closers) c();
    await server?.close();
  });

  it('WebSocket: a filtered subscriber gets the matching change (names, never values) and nothing else', async () => {
    const p = await newProject();
    const ws = await adminWs(p.headers);
    const ok = await ws.subscribe('paid', 'Order', { status: { eq: 'paid' } });
    assert.deepEqual(ok, { type: 'subscribed', id: 'paid', entity: 'Order' });
    const open = await createOrder(p.client, 'open');
    const paid = await createOrder(p.client, 'paid');
    const got = await ws.inbox.waitFor((m) => m.type === 'change' && m.entityId === paid, 'change for the paid order');
    assert.deepEqual(Object.keys(got).sort(), CHANGE_KEYS);
    assert.equal(got.subscriptionId, 'paid');
    assert.equal(got.kind, 'created');
    assert.equal(got.entity, 'Order');
    assert.deepEqual([...got.changedFields].sort(), ['note', 'status']);
    assert.equal(typeof got.eventId, 'string');
    assert.equal(typeof got.publicationVersion, 'number');
    // An update that makes the open order match is delivered as `updated`; the barrier proves the earlier create never came.
    expectStatus(await p.client.patch(`/api/orders/${open}`, { status: 'paid' }), 200);
    const upd = await ws.inbox.waitFor((m) => m.type === 'change' && m.entityId === open, 'update of the formerly open order');
    assert.equal(upd.kind, 'updated');
    assert.deepEqual(upd.changedFields, ['status']);
    const changes = ws.inbox.messages.filter((m) => m.type === 'change');
    assert.deepEqual(changes.map((m) => [m.entityId, m.kind]), [[paid, 'created'], [open, 'updated']]);
    assert.ok(!ws.raw.some((t) => t.includes('secret-note')), 'a value leaked into a change message');
    // Deletes reach every subscriber of the entity (the row is gone; no filter can be evaluated).
    expectStatus(await p.client.delete(`/api/orders/${paid}`), 204);
    const del = await ws.inbox.waitFor((m) => m.type === 'change' && m.kind === 'deleted', 'delete of the paid order');
    assert.equal(del.entityId, paid);
    assert.deepEqual(Object.keys(del).sort(), CHANGE_KEYS);
    // ping / pong, unsubscribe stops delivery.
    ws.ws.send('{"type":"ping"}');
    await ws.inbox.waitFor((m) => m.type === 'pong', 'pong');
    ws.ws.send('{"type":"unsubscribe","id":"paid"}');
    await ws.inbox.waitFor((m) => m.type === 'unsubscribed', 'unsubscribed');
  });

  it('SSE (eventsource): service.event for a matching write, nothing for a non-matching one', async () => {
    const p = await newProject();
    const filter = encodeURIComponent(JSON.stringify({ status: { eq: 'paid' } }));
    const inbox = new Inbox();
    const es = new EventSource(`${server.url}/api/realtime/sse?entity=Order&filter=${filter}`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${server.adminToken}`, ...p.headers } }),
    });
    closers.push(() => es.close());
    await new Promise<void>((resolve, reject) => {
      es.addEventListener('open', () => resolve());
      es.addEventListener('error', (e) => reject(new Error(`sse failed: ${String((e as { message?: string }).message)}`)));
    });
    es.addEventListener('service.event', (e) => inbox.push(JSON.parse(e.data) as Json));
    const open = await createOrder(p.client, 'open');
    const paid = await createOrder(p.client, 'paid');
    const got = await inbox.waitFor((m) => m.entityId === paid, 'sse change for the paid order');
    assert.deepEqual(Object.keys(got).sort(), CHANGE_KEYS);
    assert.equal(got.kind, 'created');
    assert.ok(!inbox.messages.some((m) => m.entityId === open), 'non-matching row was delivered');
    assert.equal(inbox.messages.length, 1);
    es.close();
  });

  it('a user without entity:Order:read gets 403 on subscribe; with the grant receives changes', async () => {
    const p = await newProject();
    const user = await userToken(p.client);
    const ws = await WsClient.open(wsUrl, { headers: { ...p.headers, authorization: `Bearer ${user.token}` } });
    closers.push(() => ws.close());
    const denied = await ws.subscribe('a', 'Order');
    assert.equal(denied.type, 'error');
    assert.equal(denied.status, 403);
    assert.equal(denied.code, 'ACCESS_DENIED');
    assert.equal(denied.reasonCode, 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(denied.missingGrants, ['entity:Order:read']);
    assert.equal(typeof denied.correlationId, 'string');
    expectStatus(await p.client.post(`/api/projects/${p.projectId}/capability-grants`, { subjectId: user.subjectId, grant: 'entity:Order:read' }), 201);
    const ok = await ws.subscribe('b', 'Order');
    assert.equal(ok.type, 'subscribed');
    const id = await createOrder(p.client, 'x');
    const got = await ws.inbox.waitFor((m) => m.type === 'change' && m.entityId === id, 'change after the grant');
    assert.equal(got.subscriptionId, 'b');
  });

  it('authenticates by query param, Sec-WebSocket-Protocol and a minted subscription token; a bad token is 401 at handshake', async () => {
    const p = await newProject();
    const scopeQuery = `tenant=${p.tenant}&project=${p.project}`;
    const viaQuery = await WsClient.open(`${wsUrl}?${scopeQuery}&access_token=${encodeURIComponent(server.adminToken)}`);
    closers.push(() => viaQuery.close());
    assert.equal((await viaQuery.subscribe('q', 'Order')).type, 'subscribed');
    viaQuery.close();

    const protocol = `bearer.${server.adminToken}`;
    const viaProtocol = await WsClient.open(`${wsUrl}?${scopeQuery}`, { protocols: [protocol] });
    closers.push(() => viaProtocol.close());
    assert.equal(viaProtocol.ws.protocol, protocol);
    assert.equal((await viaProtocol.subscribe('p', 'Order')).type, 'subscribed');
    viaProtocol.close();

    const minted = await p.client.post('/api/realtime/token', {});
    expectStatus(minted, 201);
    const token = minted.body.data.token as string;
    assert.match(token, /^rt1\./);
    assert.equal(typeof minted.body.data.expiresAt, 'string');
    // The token carries its project: no scope needed on the handshake.
    const viaToken = await WsClient.open(`${wsUrl}?access_token=${encodeURIComponent(token)}`);
    closers.push(() => viaToken.close());
    assert.equal((await viaToken.subscribe('t', 'Order')).type, 'subscribed');
    const id = await createOrder(p.client, 'y');
    await viaToken.inbox.waitFor((m) => m.type === 'change' && m.entityId === id, 'change via token connection');
    viaToken.close();
    // The subscription token is no REST credential.
    expectStatus(await p.client.with({ token }).get('/api/orders'), 401);

    for (const bad of [`${token.slice(0, -3)}AAA`, 'not-a-token']) {
      await assert.rejects(WsClient.open(`${wsUrl}?${scopeQuery}&access_token=${encodeURIComponent(bad)}`), (e: { statusCode?: number }) => e.statusCode === 401);
    }
    await assert.rejects(WsClient.open(`${wsUrl}?${scopeQuery}`), (e: { statusCode?: number }) => e.statusCode === 401);
  });

  it('quota: the 4th subscription is QUOTA_EXCEEDED; a 4th SSE or WebSocket handshake is 429 with quota headers', async () => {
    const p = await newProject();
    const ws = await adminWs(p.headers);
    for (const id of ['1', '2', '3']) assert.equal((await ws.subscribe(id, 'Order')).type, 'subscribed');
    const over = await ws.subscribe('4', 'Order');
    assert.equal(over.type, 'error');
    assert.equal(over.status, 429);
    assert.equal(over.code, 'QUOTA_EXCEEDED');
    assert.equal(over.reasonCode, 'Quota.RealtimeSubscriptions.Exhausted');
    assert.deepEqual({ ...over.quota, reset: undefined }, { kind: 'realtime.subscriptions', limit: 3, used: 3, reset: undefined });
    assert.ok(Math.abs(Date.parse(over.quota.reset) - Date.now()) < 60_000, 'a concurrency bound resets now');
    const headers = { ...p.headers, authorization: `Bearer ${server.adminToken}` };
    const sse = await fetch(`${server.url}/api/realtime/sse?entity=Order`, { headers });
    assert.equal(sse.status, 429, await sse.clone().text());
    assert.equal(sse.headers.get('x-service-quota-kind'), 'realtime.subscriptions');
    assert.equal(sse.headers.get('x-service-quota-limit'), '3');
    assert.equal(sse.headers.get('x-service-quota-used'), '3');
    assert.match(sse.headers.get('x-service-quota-reset') ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(((await sse.json()) as Json).error.code, 'QUOTA_EXCEEDED');
    await assert.rejects(WsClient.open(wsUrl, { headers }), (e: { statusCode?: number; headers?: Record<string, string> }) => e.statusCode === 429 && e.headers?.['x-service-quota-limit'] === '3');
    // Unsubscribing frees a slot.
    ws.ws.send('{"type":"unsubscribe","id":"1"}');
    await ws.inbox.waitFor((m) => m.type === 'unsubscribed', 'unsubscribed');
    assert.equal((await ws.subscribe('5', 'Order')).type, 'subscribed');
  });

  it('a bad filter or entity is an error message naming the field', async () => {
    const p = await newProject();
    const ws = await adminWs(p.headers);
    const bad = await ws.subscribe('f', 'Order', { nope: { eq: 1 } });
    assert.equal(bad.status, 422);
    assert.equal(bad.code, 'VALIDATION_FAILED');
    assert.equal(bad.reasonCode, 'Filter.UnknownField');
    assert.equal(bad.field, 'filter.nope');
    const badOp = await ws.subscribe('g', 'Order', { status: { near: 'x' } });
    assert.equal(badOp.field, 'filter.status.near');
    const unknown = await ws.subscribe('h', 'Nope');
    assert.equal(unknown.status, 404);
    ws.ws.send('not json');
    const malformed = await ws.inbox.waitFor((m) => m.reasonCode === 'Request.MalformedJson', 'malformed json error');
    assert.equal(malformed.status, 422);
    const sse = await fetch(`${server.url}/api/realtime/sse?entity=Order&filter=${encodeURIComponent('{"nope":{"eq":1}}')}`, { headers: { ...p.headers, authorization: `Bearer ${server.adminToken}` } });
    assert.equal(sse.status, 422);
    assert.equal(((await sse.json()) as Json).error.field, 'filter.nope');
  });
});

describe('realtime backpressure (real socket)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { REALTIME_MAX_BUFFERED_BYTES: String(64 * 1024) } });
  });
  after(async () => {
    await server?.close();
  });

  it('a client that stops reading is closed with 1013 and its subscriptions end; a reading client keeps receiving', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, `bp${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
    const headers = { 'x-service-tenant': p.tenant, 'x-service-project': p.project, authorization: `Bearer ${server.adminToken}` };
    const url = `${server.url.replace('http', 'ws')}/api/realtime`;
    const slow = await WsClient.open(url, { headers });
    const reader = await WsClient.open(url, { headers });
    try {
      // 100 subscriptions on one connection: each write sends it 100 messages (~30 KB).
      for (let i = 0; i < 100; i++) assert.equal((await slow.subscribe(`s${i}`, 'Order')).type, 'subscribed');
      assert.equal((await reader.subscribe('r', 'Order')).type, 'subscribed');
      const hub = server.node.services.realtime!;
      assert.equal(hub.localUsedBy(p.projectId), 101);
      const closed = new Promise<number>((resolve) => slow.ws.once('close', (code) => resolve(code)));
      // Stop reading: the kernel buffers fill, then uWS's, then the bound is passed.
      (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      let written = 0;
      const deadline = Date.now() + 60_000;
      while (hub.localUsedBy(p.projectId) > 1 && Date.now() < deadline) {
        const r = await p.client.post('/api/orders/batch', { items: Array.from({ length: 200 }, () => ({ status: 'x' })) });
        expectStatus(r, 201);
        written += 200;
      }
      assert.equal(hub.localUsedBy(p.projectId), 1, `the slow client's 100 subscriptions were released (after ${written} writes)`);
      (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
      assert.equal(await closed, SLOW_CONSUMER_CLOSE_CODE);
      // The reader kept up and got every change.
      const last = await p.client.post('/api/orders', { status: 'last' });
      expectStatus(last, 201);
      await reader.inbox.waitFor((m) => m.type === 'change' && m.entityId === last.body.data.id, 'the reader still receives');
      assert.equal(reader.inbox.messages.filter((m) => m.type === 'change').length, written + 1);
    } finally {
      slow.close();
      reader.close();
    }
  });
});
