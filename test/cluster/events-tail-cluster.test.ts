import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventSource } from 'eventsource';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { NatsCluster, natsServerAvailable } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../support/server.js';

const ready = natsServerAvailable() && TEST_DATABASE_URL !== null;
const mustRun = process.env.CI === 'true';

describe('event log tail in cluster mode', { skip: !ready && !mustRun ? 'needs nats-server and TEST_DATABASE_URL' : false }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: PlinthProcess;
  let b: PlinthProcess;
  const token = 'cluster-tail-admin-token-0123456789';

  before(async () => {
    nats = await NatsCluster.start(3);
    db = await createTestDatabase();
    [a, b] = await Promise.all(['tail-a', 'tail-b'].map((nodeId) => startPlinthProcess({ databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId })));
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
});
