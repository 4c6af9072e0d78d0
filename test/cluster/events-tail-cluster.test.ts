import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

/** A WebSocket realtime client: every message it received, and a wait for one. */
async function realtimeClient(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket; messages: any[]; next(pred: (m: any) => boolean, what: string): Promise<any> }> {
  const ws = new WebSocket(url, { headers });
  const messages: any[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_q, res) => reject(Object.assign(new Error(`handshake ${res.statusCode}`), { statusCode: res.statusCode })));
    ws.once('error', reject);
  });
  const next = async (pred: (m: any) => boolean, what: string): Promise<any> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const hit = messages.find(pred);
      if (hit !== undefined) return hit;
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { ws, messages, next };
}

describe('event log tail in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: PlinthProcess;
  let b: PlinthProcess;
  const token = 'cluster-tail-admin-token-0123456789';

  before(async () => {
    nats = await NatsCluster.start(3);
    db = await createTestDatabase();
    [a, b] = await Promise.all(['tail-a', 'tail-b'].map((nodeId) => startPlinthProcess({
      databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId, env: { REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT: '3' },
    })));
  });
  after(async () => {
    await reapPlinthProcesses();
    await nats?.stop();
    await db?.drop();
  });

  it('streams events committed on one node to a tail opened on the other', async () => {
    const { client, tenant, project } = await bootstrapProject(a.url, token);
    await defineEntity(client, { entityName: 'Ping', fields: [{ name: 'n', type: 'Int', nullable: false }] });
    const received: Array<{ type: string; data: { entityId: string } }> = [];
    const es = new EventSource(`${b.url}/api/events/tail`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'x-service-project': project } }),
    });
    es.addEventListener('service.event', (e) => received.push(JSON.parse((e as MessageEvent).data)));
    try {
      await new Promise<void>((resolve, reject) => {
        es.onopen = () => resolve();
        es.onerror = (e) => reject(new Error(`tail failed to open: ${String((e as { message?: string }).message)}`));
      });
      const onA = client.with({});
      const created = await Promise.all([1, 2, 3].map((n) => onA.post('/api/pings', { n })));
      const ids = created.map((r) => {
        assert.equal(r.status, 201, r.text);
        return r.body.data.id as string;
      });
      const deadline = Date.now() + 15_000;
      while (ids.some((id) => !received.some((e) => e.data.entityId === id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const id of ids) {
        const mine = received.filter((e) => e.data.entityId === id);
        assert.equal(mine.length, 1, `event for ${id} delivered once on node B`);
        assert.equal(mine[0]!.type, 'entity.Ping.created');
      }
      console.log(`# [cluster-tail] 3 writes on ${a.nodeId}, ${received.length} events tailed on ${b.nodeId}`);
    } finally {
      es.close();
    }
  });

  it('realtime: a WebSocket subscriber on node B gets the change for a matching write on node A, nothing for a non-matching one', async () => {
    const { client, tenant, project } = await bootstrapProject(a.url, token);
    await defineEntity(client, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
    const headers = { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'x-service-project': project };
    const sub = await realtimeClient(`${b.url.replace('http', 'ws')}/api/realtime`, headers);
    try {
      sub.ws.send(JSON.stringify({ type: 'subscribe', id: 'paid', entity: 'Order', filter: { status: { eq: 'paid' } } }));
      await sub.next((m) => m.type === 'subscribed' && m.id === 'paid', 'subscribed');
      const other = await client.post('/api/orders', { status: 'open' });
      const paid = await client.post('/api/orders', { status: 'paid' });
      assert.equal(other.status, 201, other.text);
      assert.equal(paid.status, 201, paid.text);
      const change = await sub.next((m) => m.type === 'change' && m.entityId === paid.body.data.id, 'the change for the paid order');
      assert.equal(change.kind, 'created');
      assert.equal(change.subscriptionId, 'paid');
      // Events are delivered in log order: the earlier non-matching write would have come first.
      assert.equal(sub.messages.filter((m) => m.type === 'change').length, 1, 'nothing for the non-matching row');
    } finally {
      sub.ws.terminate();
    }
  });

  it('realtime: the subscription quota counts every node (limit 3 across A and B)', async () => {
    const { client, tenant, project } = await bootstrapProject(a.url, token);
    await defineEntity(client, { entityName: 'Note', fields: [{ name: 't', type: 'String', nullable: true }] });
    const headers = { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'x-service-project': project };
    const onA = await realtimeClient(`${a.url.replace('http', 'ws')}/api/realtime`, headers);
    const onB = await realtimeClient(`${b.url.replace('http', 'ws')}/api/realtime`, headers);
    const subscribe = async (c: typeof onA, id: string): Promise<any> => {
      c.ws.send(JSON.stringify({ type: 'subscribe', id, entity: 'Note' }));
      return c.next((m) => (m.type === 'subscribed' || m.type === 'error') && m.id === id, `reply to ${id}`);
    };
    try {
      assert.equal((await subscribe(onA, 'a1')).type, 'subscribed');
      assert.equal((await subscribe(onA, 'a2')).type, 'subscribed');
      // Node A announces its count within ~50 ms; wait until B would refuse past the limit.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await subscribe(onB, 'b1')).type, 'subscribed');
      await new Promise((r) => setTimeout(r, 300));
      const refused = await subscribe(onA, 'a3');
      assert.equal(refused.type, 'error');
      assert.equal(refused.status, 429);
      assert.equal(refused.code, 'QUOTA_EXCEEDED');
      assert.equal(refused.quota.used, 3, 'used counts both nodes');
      await assert.rejects(realtimeClient(`${b.url.replace('http', 'ws')}/api/realtime`, headers), (e: { statusCode?: number }) => e.statusCode === 429);
      // Closing A's connection frees its two slots cluster-wide.
      onA.ws.terminate();
      const deadline = Date.now() + 10_000;
      let again: any;
      do {
        await new Promise((r) => setTimeout(r, 100));
        again = await subscribe(onB, `b${Date.now()}`);
      } while (again.type === 'error' && Date.now() < deadline);
      assert.equal(again.type, 'subscribed', 'a slot freed on A is usable on B');
    } finally {
      onA.ws.terminate();
      onB.ws.terminate();
    }
  });
});
