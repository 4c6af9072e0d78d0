/**
 * Quotas in cluster mode (two nodes in this process, NATS, one shared
 * PostgreSQL; docs/adr/0007-quota-budget-leases.md): two nodes sharing one
 * hard quota admit exactly the limit together, a node's unused lease comes
 * back when it stops, a quota change on one node applies from the next
 * request on the other; and the owner's leases of a dead node expire.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, defineEntity, type Reply } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { createTestDatabase, startServer, type TestServer } from '../support/server.js';
import { BudgetOwner, LEASE_TTL_MS } from '../../runtime/quota/budget-owner.js';
import { UNLEASED_SYNC_MS } from '../../runtime/quota/ledger.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { servicesSkip } from '../support/services.js';

describe('quotas in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  const nodes: TestServer[] = [];
  const token = `test-admin-${randomUUID()}`;

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    for (const id of ['quota-a', 'quota-b']) {
      nodes.push(await startServer({ backend: 'postgres', reuse: { dataDir: 'memory:', databaseUrl: db.url }, env: { NATS_URL: nats.natsUrl, NODE_ID: id, SERVICE_ADMIN_TOKEN: token } }));
    }
    const deadline = Date.now() + 10_000;
    while ((await nodes[0]!.node.services.node.members()).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  });
  after(async () => {
    for (const n of nodes) await n.stop();
    await nats?.stop();
    await db?.drop();
  });

  async function project(): Promise<{ projectId: string; a: Client; b: Client; adminA: Client }> {
    const [na, nb] = nodes as [TestServer, TestServer];
    const adminA = new Client(na.url, { token });
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await adminA.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const p = await adminA.post('/api/projects/create', { tenant, slug: 'app', name: 'App' });
    expectStatus(p, 201);
    const a = adminA.with({ tenant, project: 'app' });
    await defineEntity(a, { entityName: 'Note', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const b = new Client(nb.url, { token, tenant, project: 'app' });
    // Node B sees the entity (publication notices travel on the bus).
    const deadline = Date.now() + 5_000;
    while ((await b.get('/api/notes/count')).status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return { projectId: p.body.data.id, a, b, adminA };
  }

  const create = (c: Client): Promise<Reply> => c.post('/api/notes', { title: randomUUID() });

  it('two nodes sharing one hard quota admit exactly the limit between them', async () => {
    const { projectId, a, b, adminA } = await project();
    expectStatus(await adminA.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 40, mode: 'hard' }), 201);
    const replies: Reply[] = [];
    for (let round = 0; round < 6; round++) {
      replies.push(...(await Promise.all([...Array.from({ length: 5 }, () => create(a)), ...Array.from({ length: 5 }, () => create(b))])));
    }
    const ok = replies.filter((r) => r.status === 201).length;
    assert.equal(ok, 40, `admitted ${ok} of 60 against a limit of 40`);
    assert.ok(replies.every((r) => r.status === 201 || r.status === 429));
    const count = await a.get('/api/notes/count');
    expectStatus(count, 200);
    assert.equal(count.body.data?.count ?? count.body.count, 40);
  });

  it('a quota change on one node applies from the next request on the other', async () => {
    const { projectId, a, b, adminA } = await project();
    const q = await adminA.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 100, mode: 'hard' });
    expectStatus(q, 201);
    expectStatus(await create(b), 201); // B now holds a lease of several units
    expectStatus(await a.patch(`/api/usage/quotas/${q.body.data.id}`, { limit: 1 }), 200);
    expectStatus(await create(b), 429);
    expectStatus(await create(a), 429);
  });

  it('a soft quota counts cluster-wide: summary and overage events see both nodes (synced with the durable usage)', async () => {
    const { projectId, a, b, adminA } = await project();
    const q = await adminA.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 10, mode: 'soft' });
    expectStatus(q, 201);
    for (let i = 0; i < 8; i++) expectStatus(await create(a), 201);
    // A's events are durable within ~50 ms; B raises its unleased counters every UNLEASED_SYNC_MS.
    await new Promise((r) => setTimeout(r, UNLEASED_SYNC_MS * 2 + 500));
    for (let i = 0; i < 8; i++) expectStatus(await create(b), 201);
    const adminB = new Client(nodes[1]!.url, { token });
    const deadline = Date.now() + 10_000;
    let used: number[] = [];
    let overage = 0;
    for (;;) {
      used = [];
      for (const c of [adminA, adminB]) {
        const r = await c.get(`/api/Usage/${projectId}/summary`);
        expectStatus(r, 200);
        used.push(r.body.data.find((x: { quotaId: string }) => x.quotaId === q.body.data.id).used);
      }
      const ev = await adminA.get(`/api/Usage/${projectId}/events?kind=write.monthly.overage&pageSize=100`);
      expectStatus(ev, 200);
      overage = ev.body.data.reduce((n: number, e: { quantity: number }) => n + e.quantity, 0);
      if ((used.every((u) => u === 16) && overage === 6) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(used, [16, 16], 'both nodes report the cluster-wide count');
    assert.equal(overage, 6, 'the overage events sum to the units past the limit across both nodes');
  });

  it('a node hands its unused lease back when it stops (last: it stops node B)', async () => {
    const { projectId, a, b, adminA } = await project();
    expectStatus(await adminA.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 160, mode: 'hard' }), 201);
    expectStatus(await create(b), 201); // B leases a chunk of 10 and uses 1
    const batch = (c: Client, n: number): Promise<Reply> => c.post('/api/notes/batch', { items: Array.from({ length: n }, () => ({ title: randomUUID() })) });
    for (let i = 0; i < 3; i++) expectStatus(await batch(a, 50), 201);
    const refused = await create(a);
    expectStatus(refused, 429); // 150 + B's lease of 10 = 160: B's 9 unused units are not A's
    await nodes[1]!.stop();
    expectStatus(await batch(a, 9), 201);
    expectStatus(await create(a), 429);
    const count = await a.get('/api/notes/count');
    assert.equal(count.body.data.count, 160);
  });
});

describe('quota budget owner: a dead node\'s lease expires', { skip: servicesSkip('postgres') }, () => {
  it('leases never exceed the limit, and a silent node\'s lease comes back after the TTL', async () => {
    const server = await startServer({ backend: 'postgres' });
    try {
      const admin = new Client(server.url, { token: server.adminToken });
      const tenant = `t${randomUUID().slice(0, 8)}`;
      expectStatus(await admin.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
      const projectId = (await admin.post('/api/projects/create', { tenant, slug: 'app', name: 'App' })).body.data.id as string;
      const quotaId = (await admin.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 10, mode: 'hard' })).body.data.id as string;
      const owner = new BudgetOwner(server.node.services.db, projectId);
      const t0 = Date.now();
      const dead = await owner.lease({ quotaId, nodeId: 'dead', consumed: 0, want: 6 }, t0);
      assert.equal(dead?.units, 6);
      const live = await owner.lease({ quotaId, nodeId: 'live', consumed: 0, want: 6 }, t0 + 10);
      assert.equal(live?.units, 4, 'only what the other lease leaves');
      // The live node used 4 and asks for more while the dead node's lease still runs: nothing.
      const more = await owner.lease({ quotaId, nodeId: 'live', consumed: 4, want: 6 }, t0 + 20);
      assert.deepEqual([more?.units, more?.used], [0, 4]);
      // After the TTL the dead node's 6 units come back.
      const later = await owner.lease({ quotaId, nodeId: 'live', consumed: 0, want: 6 }, t0 + LEASE_TTL_MS + 1);
      assert.deepEqual([later?.units, later?.used], [6, 4]);
      // The reported count is durable (quota_usage), written by the owner.
      const row = await server.node.services.db.query<{ used: string }>('SELECT used FROM plinth.quota_usage WHERE quota_id = $1', [quotaId]);
      assert.equal(Number(row.rows[0]?.used), 4);
      // A returned lease frees its units at once.
      await owner.lease({ quotaId, nodeId: 'live', consumed: 0, want: -1 }, t0 + LEASE_TTL_MS + 2);
      const other = await owner.lease({ quotaId, nodeId: 'third', consumed: 0, want: 100 }, t0 + LEASE_TTL_MS + 3);
      assert.equal(other?.units, 6);
    } finally {
      await server.close();
    }
  });
});

describe('quotas in cluster mode: a killed node\'s budget comes back', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: TestServer | null = null;
  let victim: PlinthProcess | null = null;
  const token = `test-admin-${randomUUID()}`;

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    a = await startServer({ backend: 'postgres', reuse: { dataDir: 'memory:', databaseUrl: db.url }, env: { NATS_URL: nats.natsUrl, NODE_ID: 'quota-live', SERVICE_ADMIN_TOKEN: token } });
    victim = await startPlinthProcess({ databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId: 'quota-victim', env: { DB_POOL_SIZE: '3', GRPC_PORT: '0' } });
    const deadline = Date.now() + 15_000;
    while ((await a.node.services.node.members()).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  });
  after(async () => {
    await victim?.kill9().catch(() => {});
    reapPlinthProcesses();
    await a?.stop();
    await nats?.stop();
    await db?.drop();
  });

  it('the lease of a SIGKILLed node expires and its units can be used again; the overshoot stays within one lease', async () => {
    const live = new Client(a!.url, { token });
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await live.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const projectId = (await live.post('/api/projects/create', { tenant, slug: 'app', name: 'App' })).body.data.id as string;
    const scoped = live.with({ tenant, project: 'app' });
    await defineEntity(scoped, { entityName: 'Note', fields: [{ name: 'title', type: 'String', nullable: false }] });
    expectStatus(await live.post(`/api/Usage/${projectId}/quotas`, { kind: 'write.monthly', limit: 160, mode: 'hard' }), 201);
    const doomed = new Client(victim!.url, { token, tenant, project: 'app' });
    const deadline = Date.now() + 10_000;
    let first: Reply;
    do first = await doomed.post('/api/notes', { title: 'victim' }); while (first.status !== 201 && Date.now() < deadline);
    expectStatus(first, 201); // the victim leased a chunk of 10 and used 1
    await victim!.kill9();
    const batch = (n: number): Promise<Reply> => scoped.post('/api/notes/batch', { items: Array.from({ length: n }, () => ({ title: randomUUID() })) });
    // Admit as much as the budget allows, then wait for the dead node's lease to come back (TTL 6 s, or an owner failover).
    let admitted = 0;
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      const r = await batch(1);
      if (r.status === 201) admitted++;
      else if (r.status === 429 || r.status === 503) await new Promise((res) => setTimeout(res, 500));
      else assert.fail(`unexpected ${r.status}: ${r.text.slice(0, 200)}`);
      if (admitted >= 159) break;
    }
    assert.ok(admitted >= 159, `the dead node's units came back: ${admitted} admitted after the kill`);
    // Bound (ADR 0007): at most the dead node's lease beyond the limit.
    for (let i = 0; i < 12; i++) if ((await batch(1)).status === 201) admitted++;
    assert.ok(1 + admitted <= 160 + 10, `total ${1 + admitted} within limit + one chunk`);
  });
});
