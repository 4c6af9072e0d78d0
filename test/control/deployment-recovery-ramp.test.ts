/**
 * A node killed mid-ramp (CONTRACT: Control plane, "Deployments"; issue 14: "the recoverer
 * completes or reverts it on the next start"; docs/proposals-and-deployments.md "Recovery").
 * A real child process, SIGKILL as in a crash, the same NODE_ID restarted on the same data:
 * it knows its earlier life is dead and reverts the deployment at start, with no lease wait.
 * The deployment ends `rolledBack` at fromVersion, production serves it (no ramp left), and a
 * new deployment is accepted and succeeds.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../support/client.js';
import { forEachBackend, type Backend } from '../support/server.js';
import { expectError } from '../support/expect.js';
import { reapPlinthProcesses } from '../support/plinth-process.js';
import { controlData, untilDeployment } from './support.js';
import { crashData, LOW, projectWithTwoVersions, served, servedBy } from './deployment-crash-support.js';

forEachBackend('deployment interrupted mid-ramp by a crash', (backend: Backend) => {
  after(async () => { await reapPlinthProcesses(); });

  it('the restarted node reverts it at start: rolledBack, fromVersion served; a new deployment goes ahead', async () => {
    const data = await crashData(backend);
    try {
      let node = await data.start('deploy-a');
      const { c: first, scope, v1, v2 } = await projectWithTwoVersions(node.url, data.adminToken);
      const ramped = controlData(await first.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, ramp: [10, 20, 50, 100] }), 202);
      await untilDeployment(first, ramped.id, ['ramping']);
      assert.equal(served(await first.get('/api/customers', { 'X-Service-Correlation-Id': LOW[0]! })), v1, 'the ramp is live');
      await node.kill9();

      node = await data.start('deploy-a');
      const c = new Client(node.url, { token: data.adminToken, ...scope });
      // Reverted during start, before the first request (entity reads recover nothing, the
      // deployment routes would): no wait for the dead life's 15 s lease.
      assert.deepEqual(await servedBy(c), [v2], 'the ramp is gone: every request is served fromVersion');
      const reverted = controlData(await c.get(`/api/deployments/${ramped.id}`), 200);
      assert.deepEqual([reverted.state, reverted.servingVersion], ['rolledBack', v2]);
      expectError(await c.post(`/api/deployments/${ramped.id}/rollback`, { toVersion: v2 }), 409, 'CONFLICT', 'Deployment.AlreadyRolledBack');
      const next = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
      assert.equal((await untilDeployment(c, next.id, ['succeeded'])).servingVersion, v1);
      assert.deepEqual(await servedBy(c), [v1]);
      assert.equal(await node.terminate(), 0);
    } finally {
      await data.cleanup();
    }
  });
});
