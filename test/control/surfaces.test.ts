/**
 * /api/Surface over HTTP: register, install, suspend, resume, upgrade,
 * uninstall, is-installed; 409 for a move the state does not allow (nothing
 * changes), 404/422 on ids, 403 for a project user.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect.js';
import { controlData, projectUserToken } from './support.js';

forEachBackend('surfaces', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  it('lifecycle: registered → installed → suspended → installed → upgraded → uninstalled → installed', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    const c = p.client;
    const s = controlData(await c.post('/api/Surface', { name: 'billing', kind: 'AdminSurface', version: '1.0.0' }), 201, 'Surface', 'registered');
    assert.deepEqual([s.name, s.kind, s.version, s.state, s.installed, s.installedAt, s.projectId], ['billing', 'AdminSurface', '1.0.0', 'registered', false, null, p.projectId]);
    expectError(await c.post('/api/Surface', { name: 'billing', kind: 'AdminSurface', version: '1.0.0' }), 409, 'CONFLICT', 'Surface.NameTaken', 'name');
    assert.deepEqual(controlData(await c.get(`/api/Surface/${s.id}/is-installed`), 200), { id: s.id, installed: false, state: 'registered' });
    expectError(await c.post(`/api/Surface/${s.id}/suspend`), 409, 'CONFLICT', 'Surface.NotInstalledOrSuspended');
    expectError(await c.delete(`/api/Surface/${s.id}/uninstall`), 409, 'CONFLICT', 'Surface.NotInstalled');

    const inst = controlData(await c.post(`/api/Surface/${s.id}/install`), 200, 'Surface', 'installed');
    assert.equal(inst.state, 'installed');
    assert.ok(Number.isFinite(Date.parse(inst.installedAt)));
    expectError(await c.post(`/api/Surface/${s.id}/install`), 409, 'CONFLICT', 'Surface.AlreadyInstalled');
    expectError(await c.post(`/api/Surface/${s.id}/resume`), 409, 'CONFLICT', 'Surface.NotSuspended');
    assert.equal(controlData(await c.post(`/api/Surface/${s.id}/suspend`), 200, 'Surface', 'suspended').state, 'suspended');
    assert.equal(controlData(await c.get(`/api/Surface/${s.id}/is-installed`), 200).installed, true);
    assert.equal(controlData(await c.post(`/api/Surface/${s.id}/resume`), 200, 'Surface', 'resumed').state, 'installed');
    expectError(await c.post(`/api/Surface/${s.id}/upgrade`, { version: 'latest' }), 422, 'VALIDATION_FAILED', 'Foundation.InvalidVersion', 'version');
    expectError(await c.post(`/api/Surface/${s.id}/upgrade`, {}), 422, 'VALIDATION_FAILED', 'Surface.MissingProperty', 'version');
    const up = controlData(await c.post(`/api/Surface/${s.id}/upgrade`, { version: '1.1.0' }), 200, 'Surface', 'upgraded');
    assert.deepEqual([up.version, up.state], ['1.1.0', 'installed']);
    const un = controlData(await c.delete(`/api/Surface/${s.id}/uninstall`), 200, 'Surface', 'uninstalled');
    assert.deepEqual([un.state, un.installed, un.installedAt], ['uninstalled', false, null]);
    expectError(await c.post(`/api/Surface/${s.id}/upgrade`, { version: '1.2.0' }), 409, 'CONFLICT', 'Surface.NotInstalled');
    assert.equal(controlData(await c.get(`/api/Surface/${s.id}`), 200).version, '1.1.0', 'the refused upgrade changed nothing');
    assert.equal(controlData(await c.post(`/api/Surface/${s.id}/install`), 200).state, 'installed');

    const listed = controlData(await c.get('/api/Surface'), 200, 'Surface', 'listed') as any[];
    assert.deepEqual(listed.map((x) => x.id), [s.id]);
    // Another project sees none of them, and cannot act on them.
    const q = await bootstrapProject(server.url, server.adminToken);
    assert.deepEqual(controlData(await q.client.get('/api/Surface'), 200), []);
    expectError(await q.client.get(`/api/Surface/${s.id}`), 404, 'NOT_FOUND', 'Surface.NotFound');
    expectError(await q.client.post(`/api/Surface/${s.id}/suspend`), 404, 'NOT_FOUND', 'Surface.NotFound');
  });

  it('bad input 422, unknown ids 404, a project user 403 on every mutating route', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    const c = p.client;
    expectError(await c.post('/api/Surface', { name: 'Bad Name', kind: 'AdminSurface', version: '1.0.0' }), 422, 'VALIDATION_FAILED', 'Surface.InvalidName', 'name');
    expectError(await c.post('/api/Surface', { name: 'ok', kind: 'lower', version: '1.0.0' }), 422, 'VALIDATION_FAILED', 'Surface.InvalidKind', 'kind');
    expectError(await c.post('/api/Surface', { name: 'ok', kind: 'AdminSurface', version: 'v1' }), 422, 'VALIDATION_FAILED', 'Foundation.InvalidVersion', 'version');
    expectError(await c.post('/api/Surface', { name: 'ok', kind: 'AdminSurface' }), 422, 'VALIDATION_FAILED', 'Surface.MissingProperty', 'version');
    expectError(await c.get('/api/Surface/not-an-id'), 422, 'VALIDATION_FAILED', 'Surface.InvalidId', 'id');
    expectError(await c.post('/api/Surface/not-an-id/install'), 422, 'VALIDATION_FAILED', 'Surface.InvalidId', 'id');
    expectError(await c.get(`/api/Surface/${randomUUID()}`), 404, 'NOT_FOUND', 'Surface.NotFound');
    expectError(await c.get(`/api/Surface/${randomUUID()}/is-installed`), 404, 'NOT_FOUND', 'Surface.NotFound');
    expectError(await c.post(`/api/Surface/${randomUUID()}/install`), 404, 'NOT_FOUND', 'Surface.NotFound');
    assert.deepEqual(controlData(await c.get('/api/Surface'), 200), []);

    const s = controlData(await c.post('/api/Surface', { name: 'ok', kind: 'AdminSurface', version: '1.0.0' }), 201);
    const user = c.with({ token: await projectUserToken(c) });
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/api/Surface', { name: 'x', kind: 'AdminSurface', version: '1.0.0' }],
      ['POST', `/api/Surface/${s.id}/install`], ['DELETE', `/api/Surface/${s.id}/uninstall`],
      ['POST', `/api/Surface/${s.id}/upgrade`, { version: '2.0.0' }], ['POST', `/api/Surface/${s.id}/suspend`], ['POST', `/api/Surface/${s.id}/resume`],
    ];
    for (const [method, path, body] of calls) expectError(await user.request(method, path, body), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    assert.equal(controlData(await c.get(`/api/Surface/${s.id}`), 200).state, 'registered');
  });
});
