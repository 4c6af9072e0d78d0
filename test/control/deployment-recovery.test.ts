/**
 * A node killed mid-deployment (CONTRACT: Control plane, "Deployments"; issue 14: "the
 * recoverer completes or reverts it on the next start"; docs/proposals-and-deployments.md
 * "Recovery"). Real child processes on the same data, SIGKILL as in a crash:
 * - killed mid-ramp, restarted with the same NODE_ID: the restarted node knows the old
 *   driver is dead and reverts the deployment at start (no lease wait);
 * - killed mid-bake, a node with another NODE_ID starts: it waits out the dead driver's
 *   lease (a deployment whose lease is live is not taken over: a new one is still 409), then
 *   reverts it.
 * Each time: `rolledBack`, servingVersion = fromVersion, production's pin and
 * X-Service-Publication-Version match it, and a new deployment is accepted and succeeds.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity, type Reply } from '../support/client.js';
import { createTestDatabase, forEachBackend, type Backend } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { rampBucket } from '../../runtime/deployments/serving.js';
import { controlData, untilDeployment } from './support.js';

const V1 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const V2 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] };
/** The lease of the node killed mid-bake: the next node must wait this long at most. */
const SHORT_LEASE_MS = 4_500;
/** Its last renewal was at most lease/3 before the kill (+1 s for a renewal late on a busy machine): the lease is surely live until then. */
const SURELY_LIVE_MS = (SHORT_LEASE_MS * 2) / 3 - 1_000;
const served = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));
/** Correlation ids on both sides of every ramp percentage used here. */
const LOW = Array.from({ length: 400 }, () => randomUUID()).filter((id) => rampBucket(id) < 10).slice(0, 3);
const HIGH = Array.from({ length: 400 }, () => randomUUID()).filter((id) => rampBucket(id) >= 50).slice(0, 3);

/** The version every correlation id is served (one value when production is not ramping). */
async function servedBy(c: Client): Promise<number[]> {
  const out = new Set<number>();
  for (const id of [...LOW, ...HIGH]) out.add(served(await c.get('/api/customers', { 'X-Service-Correlation-Id': id })));
  return [...out];
}

forEachBackend('deployment interrupted by a crash', (backend: Backend) => {
  after(async () => { await reapPlinthProcesses(); });

  it('killed mid-ramp: reverted at the next start; killed mid-bake: reverted by another node once the lease lapsed; a new deployment then goes ahead', async () => {
    const adminToken = `adm-${randomUUID()}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-deploy-crash-'));
    const db = backend === 'postgres' ? await createTestDatabase() : null;
    const start = (nodeId: string, env: Record<string, string> = {}): Promise<PlinthProcess> => startPlinthProcess({
      adminToken, nodeId, databaseUrl: db?.url ?? null, env: { ...(db === null ? { DATA_DIR: dataDir } : {}), ...env },
    });
    try {
      let node = await start('deploy-a');
      const p = await bootstrapProject(node.url, adminToken);
      const scope = { tenant: p.tenant, project: p.project };
      await defineEntity(p.client, V1);
      const v1 = controlData(await p.client.get('/api/branches/main'), 200).head.publicationVersion;
      expectStatus(await p.client.put('/api/Schema/entities', V2), 200);
      const v2 = controlData(await p.client.get('/api/branches/main'), 200).head.publicationVersion;
      expectStatus(await p.client.post('/api/customers', { email: 'a@example.com', age: 3 }), 201);
      let c = p.client;

      // 1. Mid-ramp (10 % of requests on v1), SIGKILL, the same NODE_ID starts again.
      const ramped = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, ramp: [10, 20, 50, 100] }), 202);
      await untilDeployment(c, ramped.id, ['ramping']);
      assert.equal(served(await c.get('/api/customers', { 'X-Service-Correlation-Id': LOW[0]! })), v1, 'the ramp is live');
      await node.kill9();
      node = await start('deploy-a', { DEPLOYMENT_LEASE_MS: String(SHORT_LEASE_MS) });
      c = new Client(node.url, { token: adminToken, ...scope });
      // Reverted during start, before the first request (entity reads do not recover anything;
      // the deployment routes would): no wait for the old life's 15 s lease.
      assert.deepEqual(await servedBy(c), [v2], 'the ramp is gone: every request is served fromVersion');
      const reverted = controlData(await c.get(`/api/deployments/${ramped.id}`), 200);
      assert.deepEqual([reverted.state, reverted.servingVersion], ['rolledBack', v2]);
      expectError(await c.post(`/api/deployments/${ramped.id}/rollback`, { toVersion: v2 }), 409, 'CONFLICT', 'Deployment.AlreadyRolledBack');
      const next = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
      assert.equal((await untilDeployment(c, next.id, ['succeeded'])).servingVersion, v1);
      assert.deepEqual(await servedBy(c), [v1]);

      // 2. Mid-bake of v2 (v2 serves 100 %), SIGKILL, a node with another NODE_ID starts.
      const baked = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 }, bake: 60 }), 202);
      assert.equal((await untilDeployment(c, baked.id, ['baking'])).servingVersion, v2);
      assert.deepEqual(await servedBy(c), [v2]);
      await node.kill9();
      const killedAt = Date.now();
      node = await start('deploy-b');
      c = new Client(node.url, { token: adminToken, ...scope });
      // The dead driver's lease is still live for a moment: meanwhile the deployment is not taken over (409), then it is.
      const early = await c.post('/api/deployments', { target: { branch: 'main' } });
      if (Date.now() - killedAt < SURELY_LIVE_MS) expectError(early, 409, 'CONFLICT', 'Deployment.InProgress');
      else assert.ok(early.status === 202 || early.status === 409, `got ${early.status}`);
      const ended = await untilDeployment(c, baked.id, ['rolledBack', 'succeeded'], SHORT_LEASE_MS + 5_000);
      assert.deepEqual([ended.state, ended.servingVersion], ['rolledBack', v1]);
      if (early.status === 202) await untilDeployment(c, early.body.data.id, ['succeeded']);
      else assert.deepEqual(await servedBy(c), [v1], 'reverted to fromVersion');
      const last = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 } }), 202);
      assert.equal((await untilDeployment(c, last.id, ['succeeded'])).servingVersion, v2);
      assert.deepEqual(await servedBy(c), [v2]);
      assert.equal(await node.terminate(), 0);
    } finally {
      await reapPlinthProcesses();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
