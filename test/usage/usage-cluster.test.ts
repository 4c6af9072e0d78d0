/**
 * Usage in cluster mode (two nodes in this process, NATS, one shared
 * PostgreSQL): requests on both nodes are metered into one table, both
 * nodes' timers tell BillingDrainRollup but it has one activation in the
 * cluster, and the rollups equal the events whichever node answers.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { rollupId } from '../../actors/usage/index.js';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectStatus, type Json } from '../support/expect.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { createTestDatabase, startServer, type TestServer } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

describe('usage metering in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  const nodes: TestServer[] = [];

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    for (const id of ['usage-a', 'usage-b']) {
      nodes.push(await startServer({
        backend: 'postgres', reuse: { dataDir: 'memory:', databaseUrl: db.url },
        env: { NATS_URL: nats.natsUrl, NODE_ID: id, USAGE_ROLLUP_INTERVAL_MS: '300', RETENTION_BATCH_ROWS: '7', RETENTION_BATCH_PAUSE_MS: '0' },
      }));
    }
  });
  after(async () => {
    for (const n of nodes) await n.stop();
    await nats?.stop();
    await db?.drop();
  });

  it('meters both nodes into one ledger and rolls it up on one activation', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const p = await bootstrapProject(a.url, a.adminToken, `c${randomUUID().slice(0, 8)}`);
    await defineEntity(p.client, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const onB = new Client(b.url, { ...p.client.scope, token: b.adminToken });
    // Interleaved traffic on both nodes while both timers tick the rollup every 300 ms.
    for (let i = 0; i < 12; i++) {
      const c = i % 2 === 0 ? p.client : onB;
      expectStatus(await c.post('/api/docs', { title: `d${i}` }), 201);
      expectStatus(await c.get('/api/docs'), 200);
    }
    expectStatus(await onB.post('/api/docs/batch', { items: [{ title: 'x' }, { title: 'y' }, { title: 'z' }] }), 201);
    await Promise.all(nodes.flatMap((n) => [n.node.services.audit.flush(), n.node.services.usage!.flush()]));

    // Every event is rolled up by the operator's own ticks, without being asked.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const n = Number((await a.node.services.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM plinth.usage_ledger l, plinth.usage_rollup_cursor m WHERE m.id = 1 AND l.project_id = $1 AND ((l.src = 'e' AND l.id > m.last_id) OR (l.src = 'a' AND l.id > m.last_audit_seq))`, [p.projectId])).rows[0]!.n);
      if (n === 0) break;
      if (Date.now() > deadline) assert.fail(`${n} events still not rolled up`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const events = (await p.client.get(`/api/Usage/${p.projectId}/events?pageSize=200`)).body.data as Json[];
    const byKind = (rows: Json[]): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const r of rows) out[r.kind as string] = (out[r.kind as string] ?? 0) + (r.quantity as number);
      return out;
    };
    assert.deepEqual(byKind(events), { 'write.monthly': 15, 'read.monthly': 12 });
    for (const node of nodes) {
      const r = await new Client(node.url, { token: node.adminToken }).get(`/api/Usage/${p.projectId}/rollups?window=day`);
      expectStatus(r, 200);
      assert.deepEqual(byKind(r.body.data as Json[]), { 'write.monthly': 15, 'read.monthly': 12 });
    }
    // The stored rollups alone (no open tail left) hold every unit exactly once.
    const stored = await a.node.services.db.query<{ kind: string; q: string }>(
      `SELECT kind, sum(quantity)::text AS q FROM plinth.usage_rollups WHERE project_id = $1 AND time_window = 'hour' GROUP BY kind`, [p.projectId],
    );
    assert.deepEqual(Object.fromEntries(stored.rows.map((r) => [r.kind, Number(r.q)])), { 'write.monthly': 15, 'read.monthly': 12 });

    const counts = nodes.map((n) => n.node.retention.system.stats().byKind.BillingDrainRollup ?? 0);
    assert.equal(counts[0]! + counts[1]!, 1, `one activation across the cluster, got ${JSON.stringify(counts)}`);
    const first = await a.node.retention.system.ask<{ runs: number }>(rollupId, 'rollup', {});
    const second = await b.node.retention.system.ask<{ runs: number }>(rollupId, 'rollup', {});
    assert.equal(second.runs, first.runs + 1, 'asks from both nodes reach the same activation');
  });
});
