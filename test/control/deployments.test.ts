/**
 * Deployments over HTTP (CONTRACT: Control plane, "Deployments"): preview, apply
 * (with and without ramp and bake), status, rollback (404 for a version that never
 * existed), what serves traffic in X-Service-Publication-Version, a schema change on
 * main deploying at once, one deployment in flight per environment (409).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { rampBucket } from '../../runtime/deployments/serving.js';
import { controlData, newSlug, projectUserToken } from './support.js';

const V1 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const V2 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] };
const served = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

forEachBackend('deployments', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  /** Customer at v1, then `age` added at v2 (main's head); one row. */
  async function project(): Promise<{ c: Client; v1: number; v2: number }> {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, V1);
    const v1 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    expectStatus(await c.put('/api/Schema/entities', V2), 200);
    const v2 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    expectStatus(await c.post('/api/customers', { email: 'a@example.com', age: 3 }), 201);
    return { c, v1, v2 };
  }

  async function until(c: Client, id: string, states: string[], deadlineMs = 15_000): Promise<any> {
    const end = Date.now() + deadlineMs;
    for (;;) {
      const d = controlData(await c.get(`/api/deployments/${id}`), 200, 'Deployment', 'read');
      if (states.includes(d.state)) return d;
      if (Date.now() > end) assert.fail(`deployment stayed ${d.state}, wanted ${states.join('|')}`);
      await sleep(50);
    }
  }

  it('preview: plan from the serving model to the target in the diff vocabulary; changes nothing; bad targets 404/422', async () => {
    const { c, v1, v2 } = await project();
    const out = controlData(await c.post('/api/deployments/preview', { target: { branch: 'main', publicationVersion: v1 } }), 200);
    assert.deepEqual(Object.keys(out), ['plan']);
    assert.equal(out.plan.fromVersion, v2);
    assert.equal(out.plan.toVersion, v1);
    assert.deepEqual(out.plan.migrations, [{ op: 'alterEntity', entityName: 'Customer', fields: [{ op: 'dropField', field: 'age' }] }]);
    assert.ok(out.plan.steps.length > 0);
    assert.equal(served(await c.get('/api/customers')), v2, 'preview changed nothing');
    const head = controlData(await c.post('/api/deployments/preview', { target: { branch: 'main' }, environment: 'production' }), 200);
    assert.equal(head.plan.toVersion, v2);
    assert.deepEqual(head.plan.migrations, []);
    expectError(await c.post('/api/deployments/preview', { target: { branch: 'nope' } }), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    expectError(await c.post('/api/deployments/preview', { target: { branch: 'main', publicationVersion: 99999 } }), 404, 'NOT_FOUND', 'Deployment.VersionNotFound');
    expectError(await c.post('/api/deployments/preview', { target: { branch: 'main', publicationVersion: 'x' } }), 422, 'VALIDATION_FAILED', 'Deployment.InvalidVersion');
    expectError(await c.post('/api/deployments/preview', { target: 'main' }), 422, 'VALIDATION_FAILED', 'Deployment.InvalidBody');
    expectError(await c.post('/api/deployments/preview', { target: { branch: 'main' }, environment: 'staging' }), 422, 'VALIDATION_FAILED', 'Deployment.UnknownEnvironment', 'environment');
    expectError(await c.post('/api/deployments', { target: { branch: 'main' }, ramp: [50, 20] }), 422, 'VALIDATION_FAILED', 'Deployment.InvalidRamp', 'ramp');
    expectError(await c.post('/api/deployments', { target: { branch: 'main' }, bake: -1 }), 422, 'VALIDATION_FAILED', 'Deployment.InvalidBake', 'bake');
    const user = c.with({ token: await projectUserToken(c) });
    expectStatus(await user.post('/api/deployments', { target: { branch: 'main' } }), 403);
    expectStatus(await user.post('/api/deployments/preview', { target: { branch: 'main' } }), 403);
  });

  it('apply without ramp pins production; the branch header still gets the head; rollback; unknown version 404; a main change deploys at once', async () => {
    const { c, v1, v2 } = await project();
    const accepted = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202, 'Deployment', 'accepted');
    assert.deepEqual(Object.keys(accepted).sort(), ['environment', 'id', 'state', 'target']);
    assert.equal(accepted.state, 'pending');
    assert.equal(accepted.environment, 'production');
    assert.deepEqual(accepted.target, { branch: 'main', publicationVersion: v1 });
    const done = await until(c, accepted.id, ['succeeded']);
    assert.equal(done.servingVersion, v1);
    assert.match(done.createdAt, /Z$/);

    const list = await c.get('/api/customers');
    assert.equal(served(list), v1);
    assert.equal('age' in list.body.data[0], false, 'v1 has no age');
    const openapi = await c.get('/api/openapi.json');
    assert.equal(openapi.body['x-publication-version'], v1);
    const viaHeader = await c.with({ branch: 'main' }).get('/api/customers');
    assert.equal(served(viaHeader), v2);
    assert.equal(viaHeader.body.data[0].age, 3);
    // A write served by v1 works on main's tables (age is nullable) and its event names v1.
    const corr = randomUUID();
    const w = await c.post('/api/customers', { email: 'b@example.com' }, { 'X-Service-Correlation-Id': corr });
    expectStatus(w, 201);
    assert.equal(served(w), v1);

    expectError(await c.post(`/api/deployments/${accepted.id}/rollback`, { toVersion: 99999 }), 404, 'NOT_FOUND', 'Deployment.VersionNotFound');
    expectError(await c.post(`/api/deployments/${randomUUID()}/rollback`, { toVersion: v2 }), 404, 'NOT_FOUND', 'Deployment.NotFound');
    expectError(await c.get('/api/deployments/nope'), 404, 'NOT_FOUND', 'Deployment.NotFound');
    const rb = controlData(await c.post(`/api/deployments/${accepted.id}/rollback`, { toVersion: v2 }), 202);
    assert.equal(rb.state, 'rolledBack');
    assert.equal((await until(c, accepted.id, ['rolledBack'])).servingVersion, v2);
    assert.equal(served(await c.get('/api/customers')), v2);

    // Pin v1 again, then a schema change on main: production serves the new head at once.
    const again = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 } }), 202);
    await until(c, again.id, ['succeeded']);
    assert.equal(served(await c.get('/api/customers')), v1);
    const tag = await c.with({ branch: 'main' }).post('/api/Schema/entities', { entityName: 'Tag', fields: [{ name: 'x', type: 'Int', nullable: true }] });
    expectStatus(tag, 201);
    const v3 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    assert.equal(served(await c.get('/api/customers')), v3);
  });

  it('a target whose model cannot serve main tables is 409 Deployment.SchemaIncompatible and nothing changes', async () => {
    const { c, v2 } = await project();
    // Required column added on main: v2 (which lacks it) could not insert.
    expectStatus(await c.put('/api/Schema/entities', { ...V2, fields: [...V2.fields, { name: 'tier', type: 'String', nullable: false, default: 'basic' }] }), 200);
    expectStatus(await c.post('/api/Schema/entities', { entityName: 'Tag', fields: [{ name: 'x', type: 'Int', nullable: false }] }), 201);
    const v4 = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    expectStatus(await c.put('/api/Schema/entities', { entityName: 'Tag', fields: [] }), 200);
    expectError(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v4 } }), 409, 'CONFLICT', 'Deployment.SchemaIncompatible');
    const ok = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v2 } }), 202);
    await until(c, ok.id, ['succeeded']);
  });

  it('ramp: during the ramp a request goes to the target when hash(correlationId) mod 100 < percentage; bake; then succeeded', async () => {
    const { c, v1, v2 } = await project();
    const d = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, ramp: [50, 100], bake: 1 }), 202);
    // One in flight per environment: a second deployment is 409 and changes nothing.
    expectError(await c.post('/api/deployments', { target: { branch: 'main' } }), 409, 'CONFLICT', 'Deployment.InProgress');
    await until(c, d.id, ['ramping']);
    const low = Array.from({ length: 200 }, () => randomUUID()).filter((id) => rampBucket(id) < 50).slice(0, 5);
    const high = Array.from({ length: 200 }, () => randomUUID()).filter((id) => rampBucket(id) >= 50).slice(0, 5);
    for (const id of low) assert.equal(served(await c.get('/api/customers', { 'X-Service-Correlation-Id': id })), v1, `bucket ${rampBucket(id)}`);
    for (const id of high) assert.equal(served(await c.get('/api/customers', { 'X-Service-Correlation-Id': id })), v2, `bucket ${rampBucket(id)}`);
    const baking = await until(c, d.id, ['baking']);
    assert.equal(baking.servingVersion, v1);
    for (const id of high) assert.equal(served(await c.get('/api/customers', { 'X-Service-Correlation-Id': id })), v1);
    const done = await until(c, d.id, ['succeeded']);
    assert.equal(done.servingVersion, v1);
    // Now another one may start.
    const next = controlData(await c.post('/api/deployments', { target: { branch: 'main' } }), 202);
    assert.equal((await until(c, next.id, ['succeeded'])).servingVersion, v2);
    assert.equal(served(await c.get('/api/customers')), v2);
  });

  it('concurrent deployments on one project: exactly one wins, the rest 409', async () => {
    const { c, v1 } = await project();
    const replies = await Promise.all(Array.from({ length: 4 }, () => c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, bake: 1 })));
    const statuses = replies.map((r) => r.status).sort();
    assert.deepEqual(statuses, [202, 409, 409, 409]);
    for (const r of replies) if (r.status === 409) assert.equal(r.body.error.reasonCode, 'Deployment.InProgress');
    const winner = replies.find((r) => r.status === 202)!.body.data;
    await until(c, winner.id, ['succeeded']);
  });
});
