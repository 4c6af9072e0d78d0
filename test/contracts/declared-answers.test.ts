/**
 * The routes no family suite calls successfully, called here so that every declared
 * operation's answer is checked against its contract at least once per `npm test`
 * (test servers run with CHECK_ANSWERS; scripts/run-tests.ts reports the coverage and
 * fails on a gap). Each call also asserts what the answer says.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, bootstrapProject } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';

forEachBackend('declared answers not met elsewhere', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;

  before(async () => {
    server = await startServer({ backend });
    const boot = await bootstrapProject(server.url, server.adminToken);
    admin = boot.client;
    projectId = boot.projectId;
  });
  after(async () => {
    await server?.close();
  });

  it('deletes a branch by name, then the name is gone', async () => {
    expectStatus(await admin.post('/api/branches', { name: 'short-lived' }), 201);
    expectStatus(await admin.delete('/api/branches/short-lived'), 204);
    expectStatus(await admin.get('/api/branches/short-lived'), 404);
  });

  it('reads a sandbox by id', async () => {
    const created = await admin.post('/api/sandboxes', { branch: 'main' });
    expectStatus(created, 201);
    const read = await admin.get(`/api/sandboxes/${created.body.data.id}`);
    expectStatus(read, 200);
    assert.equal(read.body.data.id, created.body.data.id);
    assert.equal(read.body.data.sourceBranch, 'main');
  });

  it('lists schema snapshots', async () => {
    const snap = await admin.post('/api/Schema/snapshots');
    expectStatus(snap, 201);
    const listed = await admin.get('/api/Schema/snapshots');
    expectStatus(listed, 200);
    assert.ok(listed.body.data.some((s: { id: string }) => s.id === snap.body.data.id));
  });

  it('reads a quota by path project id, and lists, reads and replaces it under the scope headers', async () => {
    const created = await admin.post(`/api/Usage/${projectId}/quotas`, { kind: 'read.monthly', limit: 1000, mode: 'soft' });
    expectStatus(created, 201);
    const id = created.body.data.id as string;
    const read = await admin.get(`/api/Usage/${projectId}/quotas/${id}`);
    expectStatus(read, 200);
    assert.equal(read.body.data.limit, 1000);
    const listed = await admin.get('/api/usage/quotas');
    expectStatus(listed, 200);
    assert.deepEqual(listed.body.data.map((q: { id: string }) => q.id), [id]);
    const scopedRead = await admin.get(`/api/usage/quotas/${id}`);
    expectStatus(scopedRead, 200);
    assert.equal(scopedRead.body.data.kind, 'read.monthly');
    const replaced = await admin.put(`/api/usage/quotas/${id}`, { kind: 'read.monthly', limit: 2000, mode: 'soft' });
    expectStatus(replaced, 200);
    assert.equal(replaced.body.data.limit, 2000);
  });
});
