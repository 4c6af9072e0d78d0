/**
 * Branches over HTTP (CONTRACT: Control plane, "Branches"): create with copied schema
 * and rows, list, read, delete on both route families, bad input, protection, and
 * X-Service-Branch isolation through REST, GraphQL and events.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }] };
const ORDER = { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: false }, { name: 'customer', type: 'ID', nullable: false, references: 'Customer' }] };
const TAG = { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }] };

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

forEachBackend('branches', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  /** A project with Customer and Order (two rows each way) on main. */
  async function seeded(): Promise<{ c: Client; customerId: string; orderId: string }> {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, CUSTOMER);
    await defineEntity(c, ORDER);
    const cust = await c.post('/api/customers', { email: 'ada@example.com' });
    expectStatus(cust, 201);
    const order = await c.post('/api/orders', { total: 12, customer: cust.body.data.id });
    expectStatus(order, 201);
    return { c, customerId: cust.body.data.id, orderId: order.body.data.id };
  }

  const ids = async (c: Client, collection: string): Promise<string[]> => {
    const r = await c.get(`/api/${collection}`);
    expectStatus(r, 200);
    return r.body.data.map((x: any) => x.id).sort();
  };

  it('POST /api/branches copies base schema and rows (same ids); the record has CONTRACT shape', async () => {
    const { c, customerId, orderId } = await seeded();
    const main = controlData(await c.get('/api/branches/main'), 200, 'Branch', 'read');
    assert.deepEqual(Object.keys(main).sort(), ['base', 'createdAt', 'head', 'id', 'name', 'protection']);
    assert.equal(main.base, null);
    assert.deepEqual(main.protection, { requireProposal: false, requiredApprovals: 0 });
    assert.deepEqual(main.head, { publicationVersion: 2 });

    const feat = controlData(await c.post('/api/branches', { name: 'feature-1' }), 201, 'Branch', 'created');
    assert.deepEqual(Object.keys(feat).sort(), ['base', 'createdAt', 'head', 'id', 'name', 'protection']);
    assert.equal(feat.name, 'feature-1');
    assert.equal(feat.base, 'main');
    assert.deepEqual(feat.head, { publicationVersion: 2 }, 'head is base head publication until its first change');
    assert.deepEqual(feat.protection, { requireProposal: false, requiredApprovals: 0 });
    assert.match(feat.id, /^[0-9a-f-]{36}$/);
    assert.match(feat.createdAt, ISO_UTC);

    const fc = c.with({ branch: 'feature-1' });
    assert.deepEqual(await ids(fc, 'customers'), [customerId]);
    assert.deepEqual(await ids(fc, 'orders'), [orderId]);
    // Constraints came along: the unique email and the reference hold on the copy.
    expectStatus(await fc.post('/api/customers', { email: 'ada@example.com' }), 409);
    expectStatus(await fc.post('/api/orders', { total: 1, customer: randomUUID() }), 422);

    // Both route families and list.
    const viaController = controlData(await c.get(`/api/Branch/branches/${feat.id}`), 200, 'Branch', 'read');
    assert.deepEqual(viaController, feat);
    const list = controlData(await c.get('/api/branches'), 200, 'Branch', 'listed');
    assert.deepEqual(list.map((b: any) => b.name), ['main', 'feature-1']);
    assert.deepEqual(controlData(await c.get('/api/Branch/branches'), 200, 'Branch', 'listed'), list);
    const viaPost = controlData(await c.post('/api/Branch/branches', { name: 'from-feature', base: 'feature-1' }), 201, 'Branch', 'created');
    assert.equal(viaPost.base, 'feature-1');
    assert.deepEqual(await ids(c.with({ branch: 'from-feature' }), 'customers'), [customerId]);
  });

  it('writes and schema changes on a branch are invisible on main and vice versa (REST, GraphQL, events)', async () => {
    const { c, customerId } = await seeded();
    controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    const dev = c.with({ branch: 'dev' });

    const corr = randomUUID();
    const onDev = await dev.post('/api/customers', { email: 'dev@example.com' }, { 'x-service-correlation-id': corr });
    expectStatus(onDev, 201);
    const onMain = await c.post('/api/customers', { email: 'main@example.com' });
    expectStatus(onMain, 201);
    assert.deepEqual(await ids(c, 'customers'), [customerId, onMain.body.data.id].sort());
    assert.deepEqual(await ids(dev, 'customers'), [customerId, onDev.body.data.id].sort());
    // Same id, different rows: an update on main leaves the branch's copy alone.
    expectStatus(await c.patch(`/api/customers/${customerId}`, { email: 'changed@example.com' }), 200);
    assert.equal((await dev.get(`/api/customers/${customerId}`)).body.data.email, 'ada@example.com');
    expectStatus(await c.get(`/api/customers/${onDev.body.data.id}`), 404);

    // GraphQL honours the header the same way.
    const gql = async (client: Client) => {
      const r = await client.post('/graphql', { query: '{ customers(first: 50) { edges { node { id email } } } }' });
      expectStatus(r, 200);
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body.data.customers.edges.map((e: any) => e.node.email).sort();
    };
    assert.deepEqual(await gql(dev), ['ada@example.com', 'dev@example.com']);
    assert.deepEqual(await gql(c), ['changed@example.com', 'main@example.com']);

    // The event of a branch write names the branch.
    let events: any[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && events.length === 0;) {
      const r = await c.get(`/api/events?filter=${encodeURIComponent(JSON.stringify({ correlationId: corr }))}`);
      expectStatus(r, 200);
      events = r.body.data;
      if (events.length === 0) await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(events.length, 1);
    assert.equal(events[0].data.branch, 'dev');

    // A schema change on the branch moves only its head, with a version above every earlier one of the project.
    const tag = await dev.post('/api/Schema/entities', TAG);
    expectStatus(tag, 201);
    assert.equal(tag.body.data.publicationVersion, 3);
    expectStatus(await dev.get('/api/tags'), 200);
    expectError(await c.get('/api/tags'), 404, 'NOT_FOUND', 'Route.Unknown');
    assert.equal(controlData(await c.get('/api/branches/main'), 200).head.publicationVersion, 2);
    assert.equal(controlData(await c.get('/api/branches/dev'), 200).head.publicationVersion, 3);
    // The next change on main continues the project's counter.
    const onMainSchema = await c.post('/api/Schema/entities', { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: true }] });
    expectStatus(onMainSchema, 201);
    assert.equal(onMainSchema.body.data.publicationVersion, 4);
    expectError(await dev.get('/api/notes'), 404, 'NOT_FOUND', 'Route.Unknown');
    const preview = controlData(await dev.post('/api/Schema/entities/preview', { entityName: 'Extra', fields: [{ name: 'x', type: 'Int', nullable: true }] }), 200);
    assert.deepEqual([preview.fromVersion, preview.toVersion], [3, 5]);
    const next = await dev.post('/api/Schema/entities', { entityName: 'Extra', fields: [{ name: 'x', type: 'Int', nullable: true }] });
    assert.equal(next.body.data.publicationVersion, 5);
    const journal = controlData(await dev.get('/api/Schema/journal'), 200);
    assert.deepEqual(journal.map((e: any) => e.publicationVersion), [5, 3], 'a branch journal holds its own changes, with the versions assigned');
    const openapi = await dev.get('/api/openapi.json');
    expectStatus(openapi, 200);
    assert.ok(Object.keys(openapi.body.paths).some((p) => p.includes('/tags')));
    assert.ok(!Object.keys(openapi.body.paths).some((p) => p.includes('/notes')));
  });

  it('bad input: invalid names 422, taken name 409, unknown base 404, nothing half-applied', async () => {
    const { c } = await seeded();
    for (const name of ['', 'Upper', '-lead', 'has_underscore', 'a'.repeat(64), 'sp ace', 42, null]) {
      expectError(await c.post('/api/branches', { name }), 422, 'VALIDATION_FAILED', 'Branch.InvalidName', 'name');
    }
    expectError(await c.post('/api/branches', { name: 'ok', base: 'Bad_Base' }), 422, 'VALIDATION_FAILED', 'Branch.InvalidName', 'base');
    expectError(await c.post('/api/branches', { name: 'ok', extra: 1 }), 422, 'VALIDATION_FAILED', 'Branch.UnknownProperty', 'extra');
    expectError(await c.post('/api/branches', '{not json'), 422, 'VALIDATION_FAILED', 'Request.MalformedJson');
    expectError(await c.post('/api/branches', { name: 'main' }), 409, 'CONFLICT', 'Branch.Exists');
    expectError(await c.post('/api/branches', { name: 'orphan', base: 'nope' }), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await c.get('/api/branches/orphan'), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await c.with({ branch: 'orphan' }).get('/api/customers'), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    controlData(await c.post('/api/branches', { name: 'a'.repeat(63) }), 201);
    expectError(await c.post('/api/branches', { name: 'a'.repeat(63) }), 409, 'CONFLICT', 'Branch.Exists');
    expectError(await c.get(`/api/Branch/branches/${randomUUID()}`), 404, 'NOT_FOUND', 'Branch.NotFound');
    // A project user without admin authority: 403 on every mutating route.
    const user = c.with({ token: await projectUserToken(c) });
    const denied = await user.post('/api/branches', { name: 'mine' });
    expectStatus(denied, 403);
    assert.equal(denied.body.error.code, 'ACCESS_DENIED');
    expectError(await c.get('/api/branches/mine'), 404, 'NOT_FOUND', 'Branch.NotFound');
  });

  it('DELETE /api/Branch/branches/{id} → 204; the name answers 404 everywhere; main is Branch.Protected', async () => {
    const { c } = await seeded();
    const b = controlData(await c.post('/api/branches', { name: 'gone' }), 201);
    expectStatus(await c.with({ branch: 'gone' }).post('/api/customers', { email: 'x@example.com' }), 201);
    const del = await c.delete(`/api/Branch/branches/${b.id}`);
    expectStatus(del, 204);
    expectError(await c.get('/api/branches/gone'), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await c.get(`/api/Branch/branches/${b.id}`), 404, 'NOT_FOUND', 'Branch.NotFound');
    expectError(await c.with({ branch: 'gone' }).get('/api/customers'), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    expectError(await c.delete(`/api/Branch/branches/${b.id}`), 404, 'NOT_FOUND', 'Branch.NotFound');
    const main = controlData(await c.get('/api/branches/main'), 200);
    expectError(await c.delete(`/api/Branch/branches/${main.id}`), 409, 'CONFLICT', 'Branch.Protected');
    // The name can be taken again, and the new branch holds base's rows, not the deleted one's.
    controlData(await c.post('/api/branches', { name: 'gone' }), 201);
    const rows = await c.with({ branch: 'gone' }).get('/api/customers');
    assert.deepEqual(rows.body.data.map((r: any) => r.email), ['ada@example.com']);
  });

  it('protection: requireProposal refuses direct schema changes (403 Branch.ProposalRequired), not row writes', async () => {
    const { c } = await seeded();
    const b = controlData(await c.post('/api/branches', { name: 'guarded' }), 201);
    const g = c.with({ branch: 'guarded' });
    const prot = controlData(await c.put(`/api/Branch/branches/${b.id}/protection`, { requireProposal: true, requiredApprovals: 2 }), 200, 'Branch');
    assert.deepEqual(prot.protection, { requireProposal: true, requiredApprovals: 2 });
    assert.deepEqual(controlData(await c.get('/api/branches/guarded'), 200).protection, { requireProposal: true, requiredApprovals: 2 });
    expectError(await g.post('/api/Schema/entities', TAG), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectError(await g.put('/api/Schema/entities', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'x', type: 'String', nullable: true }] }), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectError(await g.delete('/api/Schema/entities?entityName=Order'), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectError(await g.post('/api/Schema/entities/batch', { entities: [TAG] }), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectError(await g.post('/api/Schema/migrate/apply', { changes: [{ action: 'create', definition: TAG }] }), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectStatus(await g.post('/api/customers', { email: 'row@example.com' }), 201);
    assert.equal(controlData(await c.get('/api/branches/guarded'), 200).head.publicationVersion, 2);
    // main is untouched by the branch's policy; bad bodies are 422.
    expectStatus(await c.post('/api/Schema/entities', TAG), 201);
    expectError(await c.put(`/api/Branch/branches/${b.id}/protection`, { requireProposal: 'yes' }), 422, 'VALIDATION_FAILED', 'Branch.InvalidProtection', 'requireProposal');
    expectError(await c.put(`/api/Branch/branches/${b.id}/protection`, { requireProposal: false, requiredApprovals: -1 }), 422, 'VALIDATION_FAILED', 'Branch.InvalidProtection', 'requiredApprovals');
    // Lifting it lets changes through again.
    controlData(await c.put(`/api/Branch/branches/${b.id}/protection`, { requireProposal: false, requiredApprovals: 0 }), 200);
    expectStatus(await g.post('/api/Schema/entities', TAG), 201);
  });
});
