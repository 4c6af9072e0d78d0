/**
 * /api/version over HTTP (CONTRACT: Versioning): platform version, project
 * version vectors, publication summaries, foundations and the upgrade
 * plan → approve → execute → rollback lifecycle, with 403/404/409/422.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, projectUserToken } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }] };
const ORDER = { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: false }, { name: 'customer', type: 'ID', nullable: true, references: 'Customer' }] };

forEachBackend('versioning', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  it('GET /api/version answers the platform version and v1, without scope headers', async () => {
    const v = controlData(await admin.get('/api/version'), 200);
    assert.deepEqual(Object.keys(v).sort(), ['apiVersions', 'platformVersion']);
    assert.match(v.platformVersion, /^\d+\.\d+\.\d+/);
    assert.deepEqual(v.apiVersions, ['v1']);
    assert.deepEqual(controlData(await admin.get('/v1/version'), 200), v);
    assert.deepEqual(controlData(await admin.with({ token: null }).get('/api/version'), 200), v, 'public: no credential needed');
  });

  it('project version vector and publication summaries follow the schema', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    assert.deepEqual(controlData(await admin.get(`/api/version/projects/${p.projectId}`), 200), { projectId: p.projectId, branches: { main: 0 }, environments: { production: 0 } });
    await defineEntity(p.client, CUSTOMER);
    await defineEntity(p.client, ORDER);
    assert.deepEqual(controlData(await admin.get(`/api/version/projects/${p.projectId}`), 200), { projectId: p.projectId, branches: { main: 2 }, environments: { production: 2 } });

    const one = controlData(await admin.get(`/api/version/projects/${p.projectId}/publication/1`), 200);
    assert.deepEqual(Object.keys(one).sort(), ['branch', 'createdAt', 'descriptorHash', 'entities', 'publicationVersion']);
    assert.equal(one.publicationVersion, 1);
    assert.equal(one.branch, 'main');
    assert.deepEqual(one.entities, ['Customer']);
    assert.match(one.descriptorHash, /^sha256:[0-9a-f]{64}$/);
    assert.ok(Number.isFinite(Date.parse(one.createdAt)));
    const two = controlData(await admin.get(`/api/version/projects/${p.projectId}/publication/2`), 200);
    assert.deepEqual(two.entities, ['Customer', 'Order']);
    assert.notEqual(two.descriptorHash, one.descriptorHash);

    expectError(await admin.get(`/api/version/projects/${p.projectId}/publication/3`), 404, 'NOT_FOUND', 'Publication.NotFound');
    expectError(await admin.get(`/api/version/projects/${p.projectId}/publication/0`), 422, 'VALIDATION_FAILED', 'Publication.InvalidVersion', 'publicationVersion');
    expectError(await admin.get(`/api/version/projects/${p.projectId}/publication/abc`), 422, 'VALIDATION_FAILED', 'Publication.InvalidVersion');
    expectError(await admin.get(`/api/version/projects/${p.projectId}/publication/99999999999999999999999`), 422, 'VALIDATION_FAILED', 'Publication.InvalidVersion');
    expectError(await admin.get(`/api/version/projects/${randomUUID()}`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get(`/api/version/projects/${randomUUID()}/publication/1`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get('/api/version/projects/not-an-id'), 422, 'VALIDATION_FAILED', 'Project.InvalidId', 'projectId');
  });

  it('platform baseline and foundations', async () => {
    const b = controlData(await admin.get('/api/version/platform-baseline'), 200, 'PlatformBaseline');
    assert.deepEqual(b.apiVersions, ['v1']);
    assert.ok(b.platformSchemaVersion >= 19);
    assert.ok(b.foundations.some((f: any) => f.profileName === 'standard' && f.foundationVersion === '1.0.0'));
    const f = controlData(await admin.get('/api/version/foundations/standard/1.1.0'), 200, 'Foundation');
    assert.equal(f.profileName, 'standard');
    assert.ok(f.capabilities.includes('mcp'));
    assert.equal(f.available, true);
    expectError(await admin.get('/api/version/foundations/standard/9.9.9'), 404, 'NOT_FOUND', 'Foundation.NotFound');
    expectError(await admin.get('/api/version/foundations/nope/1.0.0'), 404, 'NOT_FOUND', 'Foundation.NotFound');
    expectError(await admin.get('/api/version/foundations/Bad!/1.0.0'), 422, 'VALIDATION_FAILED', 'Foundation.InvalidProfileName');
    expectError(await admin.get('/api/version/foundations/standard/one'), 422, 'VALIDATION_FAILED', 'Foundation.InvalidVersion');
  });

  it('upgrade: adopt, preview, plan, approve, execute, rollback', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    const base = `/api/version/projects/${p.projectId}`;
    assert.equal(controlData(await admin.get(`${base}/foundation`), 200), null);
    expectError(await admin.post(`${base}/upgrade/plan`, { targetVersion: '1.1.0' }), 409, 'CONFLICT', 'Upgrade.NoFoundation');
    expectError(await admin.post(`${base}/foundation/adopt`, { profileName: 'standard', foundationVersion: '7.0.0' }), 404, 'NOT_FOUND', 'Foundation.NotFound');
    expectError(await admin.post(`${base}/foundation/adopt`, { profileName: 'standard' }), 422, 'VALIDATION_FAILED', 'Foundation.MissingProperty', 'foundationVersion');
    const adopted = controlData(await admin.post(`${base}/foundation/adopt`, { profileName: 'standard', foundationVersion: '1.0.0' }), 200, 'Foundation', 'adopted');
    assert.equal(adopted.foundationVersion, '1.0.0');

    const preview = controlData(await admin.post(`${base}/upgrade/preview`, { targetVersion: '1.2.0' }), 200, 'UpgradePlan', 'previewed');
    assert.deepEqual([preview.fromVersion, preview.toVersion], ['1.0.0', '1.2.0']);
    assert.deepEqual(preview.steps.map((s: any) => `${s.action}:${s.capability}`).sort(), ['add:mcp', 'add:versioning']);
    expectError(await admin.post(`${base}/upgrade/preview`, { targetVersion: '1.0.0' }), 409, 'CONFLICT', 'Upgrade.AlreadyAtVersion');
    expectError(await admin.post(`${base}/upgrade/preview`, { targetVersion: 'x' }), 422, 'VALIDATION_FAILED', 'Foundation.InvalidVersion', 'targetVersion');
    expectError(await admin.post(`${base}/upgrade/preview`, { targetVersion: '1.1.0', profileName: 'minimal' }), 409, 'CONFLICT', 'Upgrade.ProfileMismatch');

    const plan = controlData(await admin.post(`${base}/upgrade/plan`, { targetVersion: '1.2.0' }), 201, 'UpgradePlan', 'planned');
    assert.equal(plan.state, 'planned');
    assert.deepEqual(plan.steps, preview.steps);
    expectError(await admin.post(`${base}/upgrade/plans/${plan.planId}/execute`), 409, 'CONFLICT', 'Upgrade.NotApproved');
    assert.equal(controlData(await admin.post(`${base}/upgrade/plans/${plan.planId}/approve`), 200, 'UpgradePlan', 'approved').state, 'approved');
    expectError(await admin.post(`${base}/upgrade/plans/${plan.planId}/approve`), 409, 'CONFLICT', 'Upgrade.NotPlanned');
    const executed = controlData(await admin.post(`${base}/upgrade/plans/${plan.planId}/execute`), 200, 'UpgradePlan', 'executed');
    assert.equal(executed.state, 'executed');
    assert.match(executed.executionId, /^[0-9a-f-]{36}$/);
    assert.equal(controlData(await admin.get(`${base}/foundation`), 200).foundationVersion, '1.2.0');

    const rolled = controlData(await admin.post(`${base}/upgrade/executions/${executed.executionId}/rollback`), 200, 'UpgradePlan', 'rolledBack');
    assert.equal(rolled.state, 'rolledBack');
    assert.equal(controlData(await admin.get(`${base}/foundation`), 200).foundationVersion, '1.0.0');
    expectError(await admin.post(`${base}/upgrade/executions/${executed.executionId}/rollback`), 409, 'CONFLICT', 'Upgrade.NotExecuted');

    // Unknown and malformed ids; a plan of another project is unknown here.
    expectError(await admin.post(`${base}/upgrade/plans/${randomUUID()}/approve`), 404, 'NOT_FOUND', 'Upgrade.PlanNotFound');
    expectError(await admin.post(`${base}/upgrade/plans/nope/approve`), 422, 'VALIDATION_FAILED', 'Upgrade.InvalidId', 'planId');
    expectError(await admin.post(`${base}/upgrade/executions/${randomUUID()}/rollback`), 404, 'NOT_FOUND', 'Upgrade.ExecutionNotFound');
    const q = await bootstrapProject(server.url, server.adminToken);
    expectError(await admin.post(`/api/version/projects/${q.projectId}/upgrade/plans/${plan.planId}/approve`), 404, 'NOT_FOUND', 'Upgrade.PlanNotFound');
    expectError(await admin.post(`/api/version/projects/${randomUUID()}/upgrade/plan`, { targetVersion: '1.1.0' }), 404, 'NOT_FOUND', 'Project.NotFound');

    // A stale plan is refused and changes nothing.
    const stale = controlData(await admin.post(`${base}/upgrade/plan`, { targetVersion: '1.1.0' }), 201);
    controlData(await admin.post(`${base}/upgrade/plans/${stale.planId}/approve`), 200);
    controlData(await admin.post(`${base}/foundation/adopt`, { profileName: 'standard', foundationVersion: '1.2.0' }), 200);
    expectError(await admin.post(`${base}/upgrade/plans/${stale.planId}/execute`), 409, 'CONFLICT', 'Upgrade.StalePlan');
    assert.equal(controlData(await admin.get(`${base}/foundation`), 200).foundationVersion, '1.2.0');
  });

  it('a project user gets 403 on every mutating /api/version route', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(p.client, CUSTOMER);
    const user = admin.with({ token: await projectUserToken(p.client), tenant: p.tenant, project: p.project });
    const base = `/api/version/projects/${p.projectId}`;
    controlData(await admin.post(`${base}/foundation/adopt`, { profileName: 'standard', foundationVersion: '1.0.0' }), 200);
    const plan = controlData(await admin.post(`${base}/upgrade/plan`, { targetVersion: '1.1.0' }), 201);
    const calls: Array<[string, unknown?]> = [
      [`${base}/foundation/adopt`, { profileName: 'standard', foundationVersion: '1.1.0' }],
      [`${base}/upgrade/plan`, { targetVersion: '1.1.0' }],
      [`${base}/upgrade/preview`, { targetVersion: '1.1.0' }],
      [`${base}/upgrade/plans/${plan.planId}/approve`],
      [`${base}/upgrade/plans/${plan.planId}/execute`],
      [`${base}/upgrade/executions/${randomUUID()}/rollback`],
      ['/api/version/deprecations/announce', { bindingId: 'rest:Entity.Customer.List', stability: 'Retired' }],
    ];
    for (const [path, body] of calls) expectError(await user.post(path, body), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    assert.equal(controlData(await admin.get(`${base}/foundation`), 200).foundationVersion, '1.0.0');
    expectStatus(await p.client.get('/api/customers'), 200);
    assert.deepEqual(controlData(await p.client.get('/api/version/deprecations'), 200), []);
  });
});
