/**
 * Retention in cluster mode (two nodes in this process, NATS, one shared
 * PostgreSQL): both nodes' timers tell the sweepers, but each sweeper has
 * one activation in the cluster, so one node deletes and its sweep counter
 * is shared by asks from either node.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweeperId, SWEEPER_NAMES } from '../../actors/retention/index.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { createTestDatabase, startServer, type TestServer } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

describe('retention sweepers in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  const nodes: TestServer[] = [];

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    for (const id of ['sweep-a', 'sweep-b']) {
      nodes.push(await startServer({
        backend: 'postgres', reuse: { dataDir: 'memory:', databaseUrl: db.url },
        env: { NATS_URL: nats.natsUrl, NODE_ID: id, RETENTION_SWEEP_INTERVAL_MS: '1000', RETENTION_BATCH_ROWS: '10', RETENTION_BATCH_PAUSE_MS: '0' },
      }));
    }
  });
  after(async () => {
    for (const n of nodes) await n.stop();
    await nats?.stop();
    await db?.drop();
  });

  it('sweeps on one node only, whichever node ticks or asks', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    await a.node.services.db.query(
      `INSERT INTO plinth.audit (at, correlation_id, actor, operation_id, decision, reason_code, status)
       SELECT now() - interval '31 days', 'cluster-old', 'test', 'Test.Op', 'Allow', 'Ok', 200 FROM generate_series(1, 45)`,
    );
    // Both timers fire every second; wait for the old rows to go.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const n = (await a.node.services.db.query<{ n: string }>(`SELECT count(*) AS n FROM plinth.audit WHERE correlation_id = 'cluster-old'`)).rows[0]!.n;
      if (Number(n) === 0) break;
      if (Date.now() > deadline) assert.fail(`old audit rows still there: ${n}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const name of SWEEPER_NAMES) {
      const counts = nodes.map((n) => n.node.retention.system.stats().byKind[name] ?? 0);
      assert.equal(counts[0]! + counts[1]!, 1, `${name}: one activation across the cluster, got ${JSON.stringify(counts)}`);
      const first = await a.node.retention.system.ask<{ sweeps: number }>(sweeperId(name), 'sweep', {});
      const second = await b.node.retention.system.ask<{ sweeps: number }>(sweeperId(name), 'sweep', {});
      assert.equal(second.sweeps, first.sweeps + 1, `${name}: asks from both nodes reach the same activation`);
    }
  });
});
