/**
 * A node killed mid-bake (CONTRACT: Control plane, "Deployments"; issue 14;
 * docs/proposals-and-deployments.md "Recovery"). A real child process, SIGKILL as in a
 * crash, then a node with another NODE_ID on the same data: while the dead driver's lease is
 * surely live the deployment is not taken over (a new one is still 409); once it lapsed the
 * deployment ends `rolledBack` at fromVersion, production serves it, and a new deployment is
 * accepted and succeeds.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../support/client.js';
import { forEachBackend, type Backend } from '../support/server.js';
import { expectError } from '../support/expect.js';
import { reapPlinthProcesses } from '../support/plinth-process.js';
import { controlData, untilDeployment } from './support.js';
import { crashData, projectWithTwoVersions, servedBy } from './deployment-crash-support.js';

/** The killed node's lease: the next node waits this long at most. */
const LEASE_MS = 4_500;
/** Its last renewal was at most lease/3 before the kill (+1 s for a renewal late on a busy machine): the lease is surely live until then. */
const SURELY_LIVE_MS = (LEASE_MS * 2) / 3 - 1_000;

forEachBackend('deployment interrupted mid-bake by a crash', (backend: Backend) => {
  after(async () => { await reapPlinthProcesses(); });

  it('another node waits out the lease, then reverts it: rolledBack, fromVersion served; a new deployment goes ahead', async () => {
    const data = await crashData(backend);
    try {
      let node = await data.start('deploy-a', { DEPLOYMENT_LEASE_MS: String(LEASE_MS) });
      const { c: first, scope, v1, v2 } = await projectWithTwoVersions(node.url, data.adminToken);
      // Production serves v1 (pinned), then v2 bakes at 100 %.
      const pinned = controlData(await first.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
      await untilDeployment(first, pinned.id, ['succeeded']);
      const baked = controlData(await first.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 }, bake: 60 }), 202);
      assert.equal((await untilDeployment(first, baked.id, ['baking'])).servingVersion, v2);
      assert.deepEqual(await servedBy(first), [v2]);
      await node.kill9();
      const killedAt = Date.now();

      node = await data.start('deploy-b');
      const c = new Client(node.url, { token: data.adminToken, ...scope });
      const early = await c.post('/api/deployments', { target: { branch: 'main' } });
      if (Date.now() - killedAt < SURELY_LIVE_MS) expectError(early, 409, 'CONFLICT', 'Deployment.InProgress');
      else assert.ok(early.status === 202 || early.status === 409, `got ${early.status}`);
      const ended = await untilDeployment(c, baked.id, ['rolledBack', 'succeeded'], LEASE_MS + 5_000);
      assert.deepEqual([ended.state, ended.servingVersion], ['rolledBack', v1]);
      if (early.status === 202) await untilDeployment(c, early.body.data.id, ['succeeded']);
      else assert.deepEqual(await servedBy(c), [v1], 'reverted to fromVersion');
      const last = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 } }), 202);
      assert.equal((await untilDeployment(c, last.id, ['succeeded'])).servingVersion, v2);
      assert.deepEqual(await servedBy(c), [v2]);
      assert.equal(await node.terminate(), 0);
    } finally {
      await data.cleanup();
    }
  });
});
