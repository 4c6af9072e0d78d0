/**
 * A node killed mid-deployment in cluster mode (issue 14: "cluster mode for the concurrency
 * and kill cases"; docs/proposals-and-deployments.md "Recovery"): two Plinth processes on
 * NATS and one PostgreSQL database; A drives a bake and is SIGKILLed. B, alive all along,
 * does not take the deployment over while A's lease may still be live (a new deployment is
 * 409), then its own sweep reverts it: `rolledBack` at fromVersion, served by B, and a new
 * deployment through B succeeds.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Client } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase } from '../support/server.js';
import { controlData, untilDeployment } from './support.js';
import { projectWithTwoVersions, servedBy } from './deployment-crash-support.js';
import { servicesSkip } from '../support/services.js';

const LEASE_MS = 3_000;

describe('deployment interrupted by a node killed in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  after(async () => { await reapPlinthProcesses(); });

  it('the surviving node waits out the lease, then reverts it and deploys again', async () => {
    const nats = await NatsCluster.start(1);
    const db = await createTestDatabase();
    const adminToken = `adm-${randomUUID()}`;
    const start = (nodeId: string) => startPlinthProcess({ adminToken, nodeId, databaseUrl: db.url, natsUrl: nats.natsUrl, env: { DEPLOYMENT_LEASE_MS: String(LEASE_MS) } });
    try {
      const a = await start('kill-a');
      const b = await start('kill-b');
      const { c: onA, scope, v1, v2 } = await projectWithTwoVersions(a.url, adminToken);
      const pinned = controlData(await onA.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
      await untilDeployment(onA, pinned.id, ['succeeded']);
      const baked = controlData(await onA.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 }, bake: 60 }), 202);
      await untilDeployment(onA, baked.id, ['baking']);
      await a.kill9();
      const killedAt = Date.now();

      const onB = new Client(b.url, { token: adminToken, ...scope });
      const early = await onB.post('/api/deployments', { target: { branch: 'main' } });
      // A's last renewal was at most a third of the lease before the kill: live for at least 2 s after it.
      if (Date.now() - killedAt < (LEASE_MS * 2) / 3 - 500) expectError(early, 409, 'CONFLICT', 'Deployment.InProgress');
      const ended = await untilDeployment(onB, baked.id, ['rolledBack', 'succeeded'], 3 * LEASE_MS + 5_000);
      assert.deepEqual([ended.state, ended.servingVersion], ['rolledBack', v1]);
      if (early.status === 409) assert.deepEqual(await servedBy(onB), [v1], 'B serves fromVersion after the revert');
      else await untilDeployment(onB, controlData(early, 202).id, ['succeeded']);
      const next = controlData(await onB.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 } }), 202);
      assert.equal((await untilDeployment(onB, next.id, ['succeeded'])).servingVersion, v2);
      assert.deepEqual(await servedBy(onB), [v2]);
      assert.equal(await b.terminate(), 0);
    } finally {
      await reapPlinthProcesses();
      await nats.stop();
      await db.drop();
    }
  });
});
