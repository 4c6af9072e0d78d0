/**
 * Deployments in cluster mode with both nodes alive (two nodes in this process, NATS, one
 * shared PostgreSQL; docs/proposals-and-deployments.md "Recovery"): concurrent deployments
 * through both nodes — exactly one 202, the rest 409 Deployment.InProgress; and a deployment
 * whose driving node is alive is never taken over by the other node's recovery (its pass at
 * start, its sweep, its read and create routes), even when the bake outlasts the lease
 * several times: the driver's renewals keep it, and it ends `succeeded` on its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineEntity, type Reply } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { type TestServer } from '../support/server.js';
import { controlData, projectOnTwoNodes } from './support.js';
import { servicesSkip } from '../support/services.js';

const served = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));
/** Short, so that the bake below outlasts it: only the driver's renewals keep the deployment. */
const LEASE_MS = 1_500;
const BAKE_S = 4;

describe('deployments in cluster mode: one driver per deployment', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let nodes: TestServer[] = [];
  let token = '';

  before(async () => {
    cluster = await startNodesOnNats(['dr-a', 'dr-b'], { env: { DEPLOYMENT_LEASE_MS: String(LEASE_MS) } });
    ({ nodes, token } = cluster);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('concurrent deployments through both nodes: one 202, the rest 409; the other node never takes over the live driver', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const { onA, onB } = await projectOnTwoNodes(a.url, b.url, token);
    await defineEntity(onA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: true }] });
    const v1 = controlData(await onA.get('/api/branches/main'), 200).head.publicationVersion;
    expectStatus(await onA.put('/api/Schema/entities', { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: true }, { name: 'n', type: 'Int', nullable: true }] }), 200);
    const v2 = controlData(await onA.get('/api/branches/main'), 200).head.publicationVersion;

    const via = [onA, onB, onA, onB];
    const body = { target: { branch: 'main', publicationVersion: v1 }, bake: BAKE_S };
    const replies = await Promise.all(via.map((c) => c.post('/api/deployments', body)));
    assert.deepEqual(replies.map((r) => r.status).sort(), [202, 409, 409, 409], JSON.stringify(replies.map((r) => r.body.error?.reasonCode)));
    for (const r of replies.filter((x) => x.status === 409)) expectError(r, 409, 'CONFLICT', 'Deployment.InProgress');
    const won = replies.findIndex((r) => r.status === 202);
    const id: string = replies[won]!.body.data.id;
    // The node that did not accept it: its recovery must leave it alone while the driver lives.
    const other = via[won] === onA ? { client: onB, node: b } : { client: onA, node: a };

    const started = Date.now();
    const seen = new Set<string>();
    let passes = 0;
    for (;;) {
      assert.deepEqual(await other.node.node.deploymentRecovery.recoverNow(), [], 'the other node took the deployment over');
      passes += 1;
      const d = controlData(await other.client.get(`/api/deployments/${id}`), 200);
      seen.add(d.state);
      if (d.state === 'succeeded') break;
      assert.ok(['pending', 'baking'].includes(d.state), `state ${d.state}`);
      // A second deployment is refused while this one is in flight; asked only while the bake cannot
      // have ended yet (it ends BAKE_S after it started, which was after `started`), so a GET that
      // saw it baking just before it succeeded does not race the POST.
      if (Date.now() - started < BAKE_S * 1000 - 1_500) {
        expectError(await other.client.post('/api/deployments', { target: { branch: 'main' } }), 409, 'CONFLICT', 'Deployment.InProgress');
      }
      assert.ok(Date.now() - started < BAKE_S * 1000 + 10_000, 'the deployment never finished');
      await new Promise((r) => setTimeout(r, 200));
    }
    // It baked for longer than two leases: only the renewals of the live driver kept it.
    assert.ok(Date.now() - started >= 2 * LEASE_MS, `finished after ${Date.now() - started} ms`);
    assert.ok(seen.has('baking') && passes > 5, `${passes} passes, states ${[...seen].join(',')}`);
    const done = controlData(await other.client.get(`/api/deployments/${id}`), 200);
    assert.equal(done.servingVersion, v1);
    const end = Date.now() + 5_000;
    while (!(served(await onA.get('/api/docs')) === v1 && served(await onB.get('/api/docs')) === v1)) {
      assert.ok(Date.now() < end, 'both nodes serve the deployed version');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Then a new deployment goes ahead through the other node.
    const next = controlData(await other.client.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 } }), 202);
    assert.equal(next.state, 'pending');
  });
});
