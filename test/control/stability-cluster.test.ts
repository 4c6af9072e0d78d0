/**
 * Binding stability in cluster mode (two nodes in this process, NATS, one
 * shared PostgreSQL): a binding retired through node A fails closed on the
 * very next request to node B, which had the project's (empty) verdicts
 * cached; restored through B, it serves on A at once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { type TestServer } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

describe('binding stability in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let nodes: TestServer[] = [];
  /** One admin token for both nodes. */
  let token = '';

  before(async () => {
    cluster = await startNodesOnNats(['stab-a', 'stab-b']);
    ({ nodes, token } = cluster);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('retired on A fails closed on the next request to B; restored on B serves on A', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const adminA = new Client(a.url, { token });
    expectStatus(await adminA.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    expectStatus(await adminA.post('/api/projects/create', { tenant, slug: 'app', name: 'App' }), 201);
    const scopedA = adminA.with({ tenant, project: 'app' });
    const scopedB = new Client(b.url, { token, tenant, project: 'app' });
    await defineEntity(scopedA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    // Node B serves the list (and caches the project's empty verdicts).
    const deadline = Date.now() + 6_000;
    while ((await scopedB.get('/api/docs')).status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expectStatus(await scopedB.get('/api/docs'), 200);

    for (let round = 0; round < 3; round++) {
      expectStatus(await scopedA.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Doc.List', stability: 'Retired' }), 200);
      expectError(await scopedB.get('/api/docs'), 404, 'NOT_FOUND', 'ExposureBinding.Retired');
      expectStatus(await scopedB.get('/api/docs/count'), 200);
      expectStatus(await scopedB.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Doc.List', replacement: '/api/v2/docs', sunsetAt: '2032-01-01T00:00:00Z' }), 200);
      const r = await scopedA.get('/api/docs');
      expectStatus(r, 200);
      assert.equal(r.headers.get('link'), '</api/v2/docs>; rel="successor-version"');
      expectStatus(await scopedA.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Doc.List', stability: 'Stable' }), 200);
      assert.equal((await scopedB.get('/api/docs')).headers.get('deprecation'), null);
    }
  });
});
