/**
 * Branches in cluster mode (two nodes in this process, NATS, one shared PostgreSQL): a
 * branch created through node A serves reads and writes on node B at once; deleted through
 * B, it answers 404 on A; a sandbox with a short TTL is swept by the cluster's
 * StagingTtlSweeper through the Project actor wherever it lives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { type TestServer } from '../support/server.js';
import { controlData, projectOnTwoNodes } from './support.js';
import { servicesSkip } from '../support/services.js';

describe('branches in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let nodes: TestServer[] = [];
  /** One admin token for both nodes. */
  let token = '';

  before(async () => {
    cluster = await startNodesOnNats(['br-a', 'br-b']);
    ({ nodes, token } = cluster);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('created on A, used on B at once; deleted on B, gone on A; a short-TTL sandbox is swept', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const { onA, onB } = await projectOnTwoNodes(a.url, b.url, token);
    await defineEntity(onA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const doc = await onA.post('/api/docs', { title: 'on main' });
    expectStatus(doc, 201);

    const branch = controlData(await onA.post('/api/branches', { name: 'dev' }), 201);
    const devB = onB.with({ branch: 'dev' });
    const rows = await devB.get('/api/docs');
    expectStatus(rows, 200);
    assert.deepEqual(rows.body.data.map((d: any) => d.id), [doc.body.data.id]);
    expectStatus(await devB.post('/api/docs', { title: 'on dev via B' }), 201);
    assert.equal((await onA.get('/api/docs')).body.data.length, 1);
    assert.equal((await onA.with({ branch: 'dev' }).get('/api/docs')).body.data.length, 2);

    expectStatus(await onB.delete(`/api/Branch/branches/${branch.id}`), 204);
    expectError(await onA.with({ branch: 'dev' }).get('/api/docs'), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    expectError(await onA.get('/api/branches/dev'), 404, 'NOT_FOUND', 'Branch.NotFound');

    const sb = controlData(await onB.post('/api/sandboxes', { branch: 'main', seedFrom: 'main', ttlSeconds: 1 }), 201);
    const deadline = Date.parse(sb.expiresAt) + 15_000;
    let gone = false;
    while (!gone && Date.now() < deadline) {
      gone = (await onA.get(`/api/branches/${sb.branch}`)).status === 404;
      if (!gone) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(gone, 'the sandbox outlived expiresAt by 15 s');
  });
});
