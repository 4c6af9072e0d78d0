/**
 * Sandboxes over HTTP (CONTRACT: Control plane, "Sandboxes"): ephemeral branches with the
 * schema of a branch's head, rows seeded from a branch or none, listed while live, deleted
 * by hand or by the StagingTtlSweeper within 15 s after expiresAt.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }] };
const TAG = { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }] };
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const BRANCH_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

forEachBackend('sandboxes', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  async function seeded(): Promise<{ c: Client; customerId: string }> {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, CUSTOMER);
    const cust = await c.post('/api/customers', { email: 'ada@example.com' });
    expectStatus(cust, 201);
    return { c, customerId: cust.body.data.id };
  }

  it('POST /api/sandboxes: generated branch name, schema of the branch head, rows from seedFrom or none', async () => {
    const { c, customerId } = await seeded();
    controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    const dev = c.with({ branch: 'dev' });
    expectStatus(await dev.post('/api/Schema/entities', TAG), 201);
    expectStatus(await dev.post('/api/customers', { email: 'dev@example.com' }), 201);

    const before = Date.now();
    const empty = controlData(await c.post('/api/sandboxes', { branch: 'dev' }), 201, 'Sandbox', 'created');
    assert.deepEqual(Object.keys(empty).sort(), ['branch', 'createdAt', 'expiresAt', 'id', 'seedFrom', 'sourceBranch']);
    assert.match(empty.branch, BRANCH_NAME);
    assert.equal(empty.sourceBranch, 'dev');
    assert.equal(empty.seedFrom, null);
    assert.match(empty.createdAt, ISO_UTC);
    assert.match(empty.expiresAt, ISO_UTC);
    const ttl = Date.parse(empty.expiresAt) - Date.parse(empty.createdAt);
    assert.ok(Math.abs(ttl - 86_400_000) < 2_000, `default ttl is a day, got ${ttl} ms`);
    assert.ok(Date.parse(empty.createdAt) >= before - 5_000);
    const sb = c.with({ branch: empty.branch });
    expectStatus(await sb.get('/api/tags'), 200);
    assert.deepEqual((await sb.get('/api/customers')).body.data, []);
    assert.equal(controlData(await c.get(`/api/branches/${empty.branch}`), 200).head.publicationVersion, controlData(await c.get('/api/branches/dev'), 200).head.publicationVersion);

    const fromMain = controlData(await c.post('/api/sandboxes', { branch: 'dev', seedFrom: 'main', ttlSeconds: 600 }), 201);
    assert.equal(fromMain.seedFrom, 'main');
    const rows = (await c.with({ branch: fromMain.branch }).get('/api/customers')).body.data;
    assert.deepEqual(rows.map((r: any) => r.id), [customerId]);
    // A sandbox write stays in the sandbox.
    expectStatus(await c.with({ branch: fromMain.branch }).post('/api/customers', { email: 'sb@example.com' }), 201);
    assert.equal((await c.get('/api/customers')).body.data.length, 1);

    const list = controlData(await c.get('/api/sandboxes'), 200, 'Sandbox', 'listed');
    assert.deepEqual(list.map((s: any) => s.id).sort(), [empty.id, fromMain.id].sort());

    expectStatus(await c.delete(`/api/sandboxes/${empty.id}`), 204);
    expectError(await c.get(`/api/branches/${empty.branch}`), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await sb.get('/api/customers'), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    expectError(await c.delete(`/api/sandboxes/${empty.id}`), 404, 'NOT_FOUND', 'Sandbox.NotFound');
    assert.deepEqual(controlData(await c.get('/api/sandboxes'), 200).map((s: any) => s.id), [fromMain.id]);
  });

  it('bad input: unknown branch or seed 404, invalid names and ttl 422, nothing created', async () => {
    const { c } = await seeded();
    expectError(await c.post('/api/sandboxes', { branch: 'nope' }), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await c.post('/api/sandboxes', { branch: 'main', seedFrom: 'nope' }), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await c.post('/api/sandboxes', { branch: 'Main!' }), 422, 'VALIDATION_FAILED', 'Branch.InvalidName', 'branch');
    expectError(await c.post('/api/sandboxes', {}), 422, 'VALIDATION_FAILED', 'Branch.InvalidName', 'branch');
    for (const ttlSeconds of [0, -1, 1.5, '60', 10 ** 12]) {
      expectError(await c.post('/api/sandboxes', { branch: 'main', ttlSeconds }), 422, 'VALIDATION_FAILED', 'Sandbox.InvalidTtl', 'ttlSeconds');
    }
    expectError(await c.post('/api/sandboxes', { branch: 'main', other: 1 }), 422, 'VALIDATION_FAILED', 'Sandbox.UnknownProperty', 'other');
    expectError(await c.delete(`/api/sandboxes/${randomUUID()}`), 404, 'NOT_FOUND', 'Sandbox.NotFound');
    expectError(await c.delete('/api/sandboxes/not-a-uuid'), 404, 'NOT_FOUND', 'Sandbox.NotFound');
    assert.deepEqual(controlData(await c.get('/api/sandboxes'), 200), []);
    assert.deepEqual(controlData(await c.get('/api/branches'), 200).map((b: any) => b.name), ['main']);
  });

  it('the StagingTtlSweeper deletes a sandbox within 15 s after expiresAt', async () => {
    const { c } = await seeded();
    const sb = controlData(await c.post('/api/sandboxes', { branch: 'main', seedFrom: 'main', ttlSeconds: 1 }), 201);
    expectStatus(await c.get(`/api/branches/${sb.branch}`), 200);
    const expiresAt = Date.parse(sb.expiresAt);
    let goneAt: number | null = null;
    while (Date.now() < expiresAt + 15_000) {
      const r = await c.get(`/api/branches/${sb.branch}`);
      if (r.status === 404) {
        goneAt = Date.now();
        break;
      }
      expectStatus(r, 200);
      await new Promise((res) => setTimeout(res, 250));
    }
    assert.ok(goneAt !== null, 'the sandbox outlived expiresAt by 15 s');
    expectError(await c.with({ branch: sb.branch }).get('/api/customers'), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    assert.deepEqual(controlData(await c.get('/api/sandboxes'), 200), []);
  });
});
