/**
 * Proposals and deployments in cluster mode (two nodes in this process, NATS, one shared
 * PostgreSQL, one project): concurrent merges through both nodes — exactly one wins, the
 * rest 409; concurrent deployments through both nodes — exactly one wins, the rest 409; a
 * deployment made through A is what B serves (X-Service-Publication-Version) within the
 * cache bound, and a rollback through B is what A serves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defineEntity, type Reply } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { type TestServer } from '../support/server.js';
import { controlData, projectOnTwoNodes } from './support.js';
import { servicesSkip } from '../support/services.js';

const served = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));

async function eventually(what: string, check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('proposals and deployments in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let nodes: TestServer[] = [];
  /** One admin token for both nodes. */
  let token = '';

  before(async () => {
    cluster = await startNodesOnNats(['pr-a', 'pr-b']);
    ({ nodes, token } = cluster);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('concurrent merges and deployments through both nodes: one wins each time, the rest 409; B serves what A deployed', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const { onA, onB } = await projectOnTwoNodes(a.url, b.url, token);
    await defineEntity(onA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: true }] });
    const v1 = controlData(await onA.get('/api/branches/main'), 200).head.publicationVersion;
    expectStatus(await onA.post('/api/docs', { title: 'x' }), 201);

    controlData(await onA.post('/api/branches', { name: 'dev' }), 201);
    expectStatus(await onB.with({ branch: 'dev' }).post('/api/Schema/entities', { entityName: 'Tag', fields: [{ name: 'x', type: 'Int', nullable: true }] }), 201);
    const p1 = controlData(await onA.post('/api/proposals', { title: 'one', base: 'main', head: 'dev' }), 201);
    const p2 = controlData(await onB.post('/api/proposals', { title: 'two', base: 'main', head: 'dev' }), 201);
    const merges = await Promise.all([onA.post(`/api/proposals/${p1.id}/merge`, {}), onB.post(`/api/proposals/${p2.id}/merge`, {}), onB.post(`/api/proposals/${p1.id}/merge`, {})]);
    assert.deepEqual(merges.map((r) => r.status).sort(), [200, 409, 409], JSON.stringify(merges.map((r) => r.body.error?.reasonCode)));
    const v2 = merges.find((r) => r.status === 200)!.body.data.publicationVersion;
    const journal = controlData(await onB.get('/api/Schema/journal'), 200);
    assert.equal(journal.filter((j: any) => j.change.action === 'merge').length, 1);
    await eventually('B serves the merge', async () => served(await onB.get('/api/docs')) === v2);

    const deploys = await Promise.all([
      onA.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, bake: 1 }),
      onB.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, bake: 1 }),
      onB.post('/api/deployments', { target: { branch: 'main' }, bake: 1 }),
    ]);
    assert.deepEqual(deploys.map((r) => r.status).sort(), [202, 409, 409], JSON.stringify(deploys.map((r) => r.body.error)));
    const winner = deploys.find((r) => r.status === 202)!.body.data;
    await eventually('deployment succeeded', async () => controlData(await onB.get(`/api/deployments/${winner.id}`), 200).state === 'succeeded', 10_000);
    const expected = winner.target.publicationVersion;
    await eventually('both nodes serve the deployed version', async () => served(await onA.get('/api/docs')) === expected && served(await onB.get('/api/docs')) === expected);

    // A rollback through the other node is what both serve.
    const back = expected === v1 ? v2 : v1;
    expectStatus(await onB.post(`/api/deployments/${winner.id}/rollback`, { toVersion: back }), 202);
    await eventually('both nodes serve the rollback', async () => served(await onA.get('/api/docs')) === back && served(await onB.get('/api/docs')) === back);
  });
});
