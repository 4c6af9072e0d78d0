/**
 * Grant changes in cluster mode (docs/adr/0009): two nodes on one NATS and
 * one PostgreSQL, node B's NATS traffic through a fault proxy. A revoked
 * subject or role grant, or a deleted API key, is refused by B from the
 * moment A answers, although B had it cached: when the notice to B is lost
 * on the way (A sends it again until B confirms), and when B is cut off from
 * NATS altogether (A answers after its confirmation deadline; B, without bus
 * contact, reads grants from the database).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONTACT_STALE_MS } from '../../cluster/bus-contact.js';
import { CONFIRM_MS } from '../../node/cluster-invalidation.js';
import { createKey } from '../support/api-keys.js';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { NatsProxy } from '../support/nats-proxy.js';
import { eventually } from '../support/eventually.js';
import { servicesSkip } from '../support/services.js';
import { projectUserToken } from '../control/support.js';

describe('grant changes in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let proxy: NatsProxy | undefined;
  let urlA = '';
  let urlB = '';
  let token = '';

  before(async () => {
    cluster = await startNodesOnNats(['grants-a', 'grants-b'], {
      natsUrlFor: async (id, natsUrl) => {
        if (id !== 'grants-b') return natsUrl;
        proxy = await NatsProxy.start(natsUrl);
        return proxy.url;
      },
    });
    [urlA, urlB] = cluster.nodes.map((n) => n.url) as [string, string];
    token = cluster.token;
  });
  after(async () => {
    proxy?.resume();
    await cluster?.stop();
    await proxy?.close();
  });

  /** A project with entity Doc and one row, and a user of it holding `entity:Doc:read` (its grant id), read on B until B caches it. */
  /** A new project with entity Doc, through node A: the admin scoped to it on A and on B. */
  async function projectWithDoc(): Promise<{ onA: Client; onB: Client; projectId: string }> {
    const { client: onA, projectId, tenant, project } = await bootstrapProject(urlA, token);
    await defineEntity(onA, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    return { onA, onB: new Client(urlB, { token, tenant, project }), projectId };
  }

  /** `holder`: the grant is the user's own, or its role's (`authenticated`, held by every registered user). */
  async function readerOnB(holder: 'subject' | 'role' = 'subject'): Promise<{ onA: Client; projectId: string; grantId: string; userB: Client; docPath: string }> {
    const { onA, onB, projectId } = await projectWithDoc();
    const doc = await onA.post('/api/docs', { title: 'secret' });
    expectStatus(doc, 201);
    const userToken = await projectUserToken(onA);
    const subjectId = JSON.parse(Buffer.from(userToken.split('.')[1]!, 'base64url').toString()).sub as string;
    const grant = await onA.post(`/api/projects/${projectId}/capability-grants`, { ...(holder === 'subject' ? { subjectId } : { role: 'authenticated' }), grant: 'entity:Doc:read' });
    expectStatus(grant, 201);
    const userB = onB.with({ token: userToken });
    const docPath = `/api/docs/${doc.body.data.id}`;
    expectStatus(await eventually(() => userB.get(docPath), (r) => r.status === 200), 200);
    return { onA, projectId, grantId: grant.body.data.grantId, userB, docPath };
  }

  for (const holder of ['subject', 'role'] as const) {
    it(`a revoked ${holder} grant is refused on node B right after A answers, though the notice to B was lost`, async () => {
      const { onA, projectId, grantId, userB, docPath } = await readerOnB(holder);
      const before = proxy!.dropped.get('plinth.bus.grants') ?? 0;
      proxy!.dropNext('plinth.bus.grants');
      expectStatus(await onA.delete(`/api/projects/${projectId}/capability-grants/${grantId}`), 204);
      assert.equal(proxy!.dropped.get('plinth.bus.grants'), before + 1, 'the proxy dropped the first notice to B');
      expectError(await userB.get(docPath), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    });
  }

  it('a deleted API key is refused on node B right after A answers, though the notice to B was lost', async () => {
    const { onA, onB, projectId } = await projectWithDoc();
    const key = await createKey(onA, projectId, { name: 'ci', grants: ['entity:Doc:read'] });
    const keyB = onB.with({ token: key.secret });
    expectStatus(await eventually(() => keyB.get('/api/docs'), (r) => r.status === 200), 200);
    proxy!.dropNext('plinth.bus.apikey-revoked');
    const del = await onA.delete(`/api/projects/${projectId}/api-keys/${key.id}`);
    assert.ok(del.status === 204 || del.status === 200, `delete answered ${del.status}`);
    assert.equal(proxy!.dropped.get('plinth.bus.apikey-revoked'), 1, 'the proxy dropped the first notice to B');
    expectError(await keyB.get('/api/docs'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
  });

  it('a node cut off from NATS does not hold up a revocation past the deadline, and refuses the revoked grant', async () => {
    const { onA, projectId, grantId, userB, docPath } = await readerOnB();
    proxy!.pause();
    try {
      const t0 = Date.now();
      expectStatus(await onA.delete(`/api/projects/${projectId}/capability-grants/${grantId}`), 204);
      const waited = Date.now() - t0;
      // A waited for B's confirmation until the deadline, not longer (generous upper margin: a loaded machine).
      assert.ok(waited >= CONFIRM_MS - 100 && waited < CONFIRM_MS + 3_000, `revoke answered after ${waited} ms`);
      assert.ok(CONTACT_STALE_MS < CONFIRM_MS);
      // B has had no echo for longer than CONTACT_STALE_MS: it no longer trusts its cached grants.
      expectError(await userB.get(docPath), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    } finally {
      proxy!.resume();
    }
    // Contact back: B serves from its cache again, and still refuses.
    await new Promise((r) => setTimeout(r, 500));
    expectError(await userB.get(docPath), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
  });
});

