/**
 * A node stopped gracefully (SIGTERM) mid-bake (docs/proposals-and-deployments.md
 * "Recovery"): it reverts the deployments it drives as it stops, instead of leaving them
 * for another node one lease later. The lease here is ten minutes, so only the stopping
 * node's own revert can explain what the next node finds at once: the deployment
 * `rolledBack` at fromVersion, production serving it, and a new deployment accepted.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../support/client.js';
import { forEachBackend, type Backend } from '../support/server.js';
import { reapPlinthProcesses } from '../support/plinth-process.js';
import { controlData, untilDeployment } from './support.js';
import { crashData, projectWithTwoVersions, servedBy } from './deployment-crash-support.js';

const LONG_LEASE = { DEPLOYMENT_LEASE_MS: String(10 * 60_000) };

forEachBackend('deployment interrupted mid-bake by a graceful stop', (backend: Backend) => {
  after(async () => { await reapPlinthProcesses(); });

  it('the stopping node reverts it: the next node finds it rolledBack at fromVersion and accepts a new deployment at once', async () => {
    const data = await crashData(backend);
    try {
      let node = await data.start('stop-a', LONG_LEASE);
      const { c: first, scope, v1, v2 } = await projectWithTwoVersions(node.url, data.adminToken);
      const pinned = controlData(await first.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
      await untilDeployment(first, pinned.id, ['succeeded']);
      const baked = controlData(await first.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 }, bake: 600 }), 202);
      await untilDeployment(first, baked.id, ['baking']);
      assert.equal(await node.terminate(), 0);

      node = await data.start('stop-b', LONG_LEASE);
      const c = new Client(node.url, { token: data.adminToken, ...scope });
      const record = controlData(await c.get(`/api/deployments/${baked.id}`), 200);
      assert.deepEqual([record.state, record.servingVersion], ['rolledBack', v1]);
      assert.deepEqual(await servedBy(c), [v1]);
      const next = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 } }), 202);
      assert.equal((await untilDeployment(c, next.id, ['succeeded'])).servingVersion, v2);
      assert.equal(await node.terminate(), 0);
    } finally {
      await data.cleanup();
    }
  });
});
