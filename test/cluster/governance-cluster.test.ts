/**
 * Governance envelopes in cluster mode (two nodes in this process, NATS, one
 * shared PostgreSQL): an envelope set through one node applies from the very
 * next request on the other, for the project's descendants too, although
 * that node had the old (empty) envelope cached.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { NatsCluster, startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { createTestDatabase, startServer, type TestServer } from '../support/server.js';
import { servicesSkip } from '../support/services.js';
import { eventually } from '../support/eventually.js';

describe('governance envelopes in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let nodes: TestServer[] = [];
  /** One admin token for both nodes. */
  let token = '';

  before(async () => {
    cluster = await startNodesOnNats(['gov-a', 'gov-b']);
    ({ nodes, token } = cluster);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('an envelope PUT on node A applies to the next request on node B, for the child too', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const adminA = new Client(a.url, { token });
    const adminB = new Client(b.url, { token });
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await adminA.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const parent = (await adminA.post('/api/projects/create', { tenant, slug: 'parent', name: 'Parent' })).body.data.id as string;
    const child = (await adminA.post(`/api/projects/${parent}/children`, { slug: 'child', name: 'Child' })).body.data.id as string;
    const scopedA = adminA.with({ tenant, project: 'child' });
    await defineEntity(scopedA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    const reg = await scopedA.with({ token: null }).post('/api/identity/register', { email, password: 'correct horse 42' });
    expectStatus(reg, 201);
    for (const grant of ['entity:Doc:read', 'entity:Doc:delete']) expectStatus(await adminA.post(`/api/projects/${child}/capability-grants`, { subjectId: reg.body.data.subjectId, grant }), 201);
    const login = await scopedA.with({ token: null }).post('/api/identity/login', { email, password: 'correct horse 42' });
    const userB = new Client(b.url, { token: login.body.accessToken, tenant, project: 'child' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await scopedA.post('/api/docs', { title: `d${i}` })).body.data.id);

    // Node B serves the child with no envelope (and caches that).
    expectStatus(await eventually(() => userB.get('/api/docs'), (r) => r.status === 200), 200);
    expectStatus(await userB.delete(`/api/docs/${ids[0]}`), 204);

    for (let round = 0; round < 3; round++) {
      // Set on A, the very next request on B is refused; lifted on B, the next on A passes.
      expectStatus(await adminA.put(`/api/projects/${parent}/governance/inheritance-policy`, { envelope: { deniedGrants: ['entity:*:delete'], maxPageSize: 2 } }), 200);
      expectError(await userB.delete(`/api/docs/${ids[1 + round]}`), 403, 'ACCESS_DENIED', 'Governance.EnvelopeExceeded');
      assert.equal((await userB.get('/api/docs')).body.data.length, 2);
      expectError(await adminB.post(`/api/projects/${child}/capability-grants`, { role: 'authenticated', grant: 'entity:Doc:delete' }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded');
      expectStatus(await adminB.put(`/api/projects/${parent}/governance/inheritance-policy`, { envelope: {} }), 200);
      const userA = new Client(a.url, userB.scope);
      expectStatus(await userA.delete(`/api/docs/${ids[1 + round]}`), 204);
      assert.equal((await userA.get('/api/docs')).body.data.length, 4 - round);
      assert.deepEqual((await adminA.get(`/api/projects/${child}/governance/envelope`)).body.data.effective, {});
    }
  });
});

describe('project suspension in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  const nodes: TestServer[] = [];
  const token = `test-admin-${randomUUID()}`;

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    for (const id of ['susp-a', 'susp-b']) {
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

  it('suspend on node A answers Project.Suspended on the next request to node B; resume on B restores A', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const adminA = new Client(a.url, { token });
    const adminB = new Client(b.url, { token });
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await adminA.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const project = (await adminA.post('/api/projects/create', { tenant, slug: 'app', name: 'App' })).body.data.id as string;
    const scopedA = adminA.with({ tenant, project: 'app' });
    await defineEntity(scopedA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    const reg = await scopedA.with({ token: null }).post('/api/identity/register', { email, password: 'correct horse 42' });
    expectStatus(await adminA.post(`/api/projects/${project}/capability-grants`, { subjectId: reg.body.data.subjectId, grant: 'entity:Doc:read' }), 201);
    const login = await scopedA.with({ token: null }).post('/api/identity/login', { email, password: 'correct horse 42' });
    const userA = new Client(a.url, { token: login.body.accessToken, tenant, project: 'app' });
    const userB = new Client(b.url, userA.scope);
    expectStatus(await eventually(() => userB.get('/api/docs'), (r) => r.status === 200), 200);
    for (let round = 0; round < 3; round++) {
      expectStatus(await adminA.post(`/api/projects/${project}/suspend`), 200);
      expectError(await userB.get('/api/docs'), 403, 'ACCESS_DENIED', 'Project.Suspended');
      expectStatus(await adminB.post(`/api/projects/${project}/resume`), 200);
      expectStatus(await userA.get('/api/docs'), 200);
    }
  });
});
