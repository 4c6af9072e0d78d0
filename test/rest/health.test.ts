import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { bootstrapProject, Client, errorOf } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';

forEachBackend('health, readiness and the runtime fabric', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
    ({ projectId } = await bootstrapProject(server.url, server.adminToken));
  });
  after(() => server.close());

  it('answers liveness, readiness and health without a credential, with the status only', async () => {
    const anon = new Client(server.url);
    const live = await anon.get('/api/health/live');
    assert.equal(live.status, 200);
    assert.deepEqual(live.body, { status: 'live' });
    const ready = await anon.get('/api/health/ready');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready', checks: { storage: 'ok' } });
    const health = await anon.get('/api/health');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
  });

  it('node id, mode, members and load (RSS, in flight) only for the admin bearer; a user token or a bad one sees the public answer', async () => {
    const health = await admin.get('/api/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    assert.equal(health.body.mode, 'single');
    assert.equal(typeof health.body.nodeId, 'string');
    assert.equal(health.body.members.length, 1);
    assert.equal(health.body.members[0].nodeId, health.body.nodeId);
    assert.equal(typeof health.body.members[0].load.rssBytes, 'number');
    assert.equal(typeof health.body.members[0].load.inFlight, 'number');
    assert.equal((await admin.get('/api/health/live')).body.nodeId, health.body.nodeId);
    assert.equal((await admin.get('/api/health/ready')).body.nodeId, health.body.nodeId);
    const { client } = await bootstrapProject(server.url, server.adminToken);
    const anon = client.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    assert.equal((await anon.post('/api/identity/register', { email, password: 'long enough pw' })).status, 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    for (const token of [login.body.accessToken as string, 'not-a-token']) {
      const r = await new Client(server.url, { token }).get('/api/health');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'ok' }, `token ${token.slice(0, 12)}…`);
    }
  });

  it('lists this node in the project fabric (admin only)', async () => {
    const r = await admin.get(`/api/RuntimeFabric/${projectId}/fabric`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.surface, 'RuntimeFabric');
    assert.equal(r.body.data.projectId, projectId);
    assert.equal(r.body.data.mode, 'single');
    assert.equal(r.body.data.nodes.length, 1);
    assert.equal(typeof r.body.data.nodes[0].load.rssBytes, 'number');
    assert.equal((await new Client(server.url).get(`/api/RuntimeFabric/${projectId}/fabric`)).status, 401);
    const missing = await admin.get('/api/RuntimeFabric/00000000-0000-4000-8000-000000000000/fabric');
    assert.equal(missing.status, 404);
    assert.equal(errorOf(missing).reasonCode, 'Project.NotFound');
  });

  it('reports not ready while draining', async () => {
    const other = await startServer({ backend });
    const anon = new Client(other.url);
    assert.equal((await anon.get('/api/health/ready')).status, 200);
    (other.node.services.node as { draining: boolean }).draining = true;
    const r = await anon.get('/api/health/ready');
    assert.equal(r.status, 503);
    assert.equal(errorOf(r).reasonCode, 'Node.NotReady');
    await other.close();
  });
});
