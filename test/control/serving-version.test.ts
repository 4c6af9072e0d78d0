/**
 * What production serves, as the control plane and Explainability report it (issue 22 findings
 * 5, 6 and 8): `GET /api/version/projects/{id}` names the serving version under
 * `environments.production` while `branches.main` names the head (CONTRACT "Versioning");
 * `projectRuntime` says `pinned: true` with the pinned version while a deployment pins the
 * publication, and shows `servedBy` (node identity) to the platform admin only, as /api/health does.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken, untilDeployment } from './support.js';

const V1 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const V2 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] };
const served = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));

forEachBackend('serving version', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  /** Customer at v1, then v2 (main's head); the admin scoped to it and a project user holding nothing. */
  async function project(): Promise<{ c: Client; user: Client; projectId: string; v1: number; v2: number }> {
    const boot = await bootstrapProject(server.url, server.adminToken, newSlug());
    const c = boot.client;
    await defineEntity(c, V1);
    const v1 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    expectStatus(await c.put('/api/Schema/entities', V2), 200);
    const v2 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    return { c, user: c.with({ token: await projectUserToken(c) }), projectId: boot.projectId, v1, v2 };
  }

  const vector = async (c: Client, projectId: string): Promise<any> => controlData(await c.get(`/api/version/projects/${projectId}`), 200, 'Version', 'read');
  const runtime = async (c: Client): Promise<any> => {
    const r = await c.get('/api/Explainability/projectRuntime');
    expectStatus(r, 200);
    return r.body.data;
  };

  it('the version vector names the serving version for production and the head for main while a deployment pins an older one', async () => {
    const { c, projectId, v1, v2 } = await project();
    assert.deepEqual((await vector(c, projectId)).environments, { production: v2 });

    const d = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
    assert.equal((await untilDeployment(c, d.id, ['succeeded'])).servingVersion, v1);
    assert.equal(served(await c.get('/api/customers')), v1);
    const pinned = await vector(c, projectId);
    assert.deepEqual([pinned.environments, pinned.branches.main], [{ production: v1 }, v2]);

    // A schema change on main deploys at once: the pin no longer holds, production serves the new head.
    expectStatus(await c.post('/api/Schema/entities', { entityName: 'Tag', fields: [{ name: 'x', type: 'Int', nullable: true }] }), 201);
    const v3 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    assert.equal(served(await c.get('/api/customers')), v3);
    const after = await vector(c, projectId);
    assert.deepEqual([after.environments, after.branches.main], [{ production: v3 }, v3]);
  });

  it('projectRuntime shows servedBy (node identity) to the platform admin only, as /api/health does', async () => {
    const { c, user, v2 } = await project();
    assert.deepEqual(Object.keys((await runtime(c)).servedBy).sort(), ['mode', 'nodeId', 'storage']);
    const asUser = await runtime(user);
    assert.equal('servedBy' in asUser, false, 'a project user does not see node identity');
    assert.equal(asUser.publicationVersion, v2);
  });

  it('projectRuntime: pinned with the pinned version while a deployment pins it; not through X-Service-Branch; not once main moved', async () => {
    const { c, user, v1, v2 } = await project();
    const before = await runtime(c);
    assert.deepEqual([before.pinned, before.publicationVersion], [false, v2]);

    const d = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
    await untilDeployment(c, d.id, ['succeeded']);
    const pinned = await runtime(c);
    assert.deepEqual([pinned.pinned, pinned.publicationVersion, pinned.headVersion], [true, v1, v2]);
    assert.equal(pinned.pinnedVersion, v1);
    assert.match(pinned.reason, /deployment pins production/);
    const pinnedAsUser = await runtime(user);
    assert.deepEqual([pinnedAsUser.pinned, pinnedAsUser.pinnedVersion], [true, v1]);
    assert.equal(before.pinnedVersion, null);
    // The branch header is served by the branch head, never by a pin.
    const viaHeader = await runtime(c.with({ branch: 'main' }));
    assert.deepEqual([viaHeader.pinned, viaHeader.pinnedVersion, viaHeader.publicationVersion], [false, null, v2]);

    expectStatus(await c.post('/api/Schema/entities', { entityName: 'Tag', fields: [{ name: 'x', type: 'Int', nullable: true }] }), 201);
    const moved = await runtime(c);
    assert.deepEqual([moved.pinned, moved.pinnedVersion, moved.publicationVersion === moved.headVersion], [false, null, true]);
  });
});
