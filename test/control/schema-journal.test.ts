/**
 * Schema journal and migrations over HTTP (CONTRACT: Control plane, "Schema journal and
 * migrations"): journal entries, migration-history, snapshots, diff, migrate/apply all or
 * nothing, entities/batch and delete-batch, migrate/rollback and the recover route.
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

forEachBackend('schema journal and migrations', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  const project = async (): Promise<Client> => (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
  const version = async (c: Client): Promise<number> => controlData(await c.get('/api/Schema/entities/metadata'), 200).publicationVersion;
  const entityNames = async (c: Client): Promise<string[]> => controlData(await c.get('/api/Schema/entities/metadata'), 200).entities.map((e: any) => e.entityName);
  const journal = async (c: Client): Promise<any[]> => controlData(await c.get('/api/Schema/journal'), 200, 'SchemaJournal', 'listed');

  it('journal entries are { id, publicationVersion, change, state, at }, newest first; migration-history oldest first', async () => {
    const c = await project();
    await defineEntity(c, CUSTOMER);
    await defineEntity(c, TAG);
    expectStatus(await c.put('/api/Schema/entities', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] }), 200);
    const entries = await journal(c);
    assert.deepEqual(entries.map((e) => e.publicationVersion), [3, 2, 1]);
    assert.deepEqual(entries.map((e) => [e.change.action, e.change.entityName, e.state]), [['alter', 'Customer', 'applied'], ['create', 'Tag', 'applied'], ['create', 'Customer', 'applied']]);
    for (const e of entries) {
      assert.deepEqual(Object.keys(e).sort(), ['at', 'change', 'id', 'publicationVersion', 'state']);
      assert.ok(!Number.isNaN(Date.parse(e.at)) && e.at.endsWith('Z'));
    }
    assert.equal(entries[0].change.definition.fields.length, 2);
    const history = controlData(await c.get('/api/Schema/migration-history/Customer'), 200);
    assert.deepEqual(history.map((e: any) => e.publicationVersion), [1, 3]);
    assert.deepEqual(history[0], entries[2]);
    assert.deepEqual(controlData(await c.get('/api/Schema/migration-history/Nothing'), 200), []);
  });

  it('preview answers field changes and no SQL, applying nothing', async () => {
    const c = await project();
    await defineEntity(c, CUSTOMER);
    const p = controlData(await c.post('/api/Schema/entities/preview', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] }), 200, 'Schema', 'previewed');
    assert.deepEqual(p, { action: 'alter', entityName: 'Customer', changes: [{ op: 'alterField', field: 'email' }, { op: 'addField', field: 'age' }], fromVersion: 1, toVersion: 2 });
    const drop = controlData(await c.post('/api/Schema/entities/preview', { entityName: 'Customer', fields: [{ name: 'age', type: 'Int', nullable: true }] }), 200);
    assert.deepEqual(drop.changes, [{ op: 'dropField', field: 'email' }, { op: 'addField', field: 'age' }]);
    assert.equal(await version(c), 1);
  });

  it('snapshots keep the head they were taken at; diff takes versions or branch names', async () => {
    const c = await project();
    await defineEntity(c, CUSTOMER);
    const snap = controlData(await c.post('/api/Schema/snapshots'), 201, 'SchemaSnapshot', 'created');
    assert.deepEqual(Object.keys(snap).sort(), ['id', 'publicationVersion']);
    assert.equal(snap.publicationVersion, 1);
    await defineEntity(c, TAG);
    expectStatus(await c.delete('/api/Schema/entities?entityName=Customer'), 200);
    const read = controlData(await c.get(`/api/Schema/snapshots/${snap.id}`), 200, 'SchemaSnapshot', 'read');
    assert.equal(read.id, snap.id);
    assert.equal(read.publicationVersion, 1);
    assert.deepEqual(read.entities.map((e: any) => e.entityName), ['Customer']);
    assert.equal(read.entities[0].fields[0].name, 'email');
    expectError(await c.get(`/api/Schema/snapshots/${randomUUID()}`), 404, 'NOT_FOUND', 'Schema.SnapshotNotFound');
    expectError(await c.get('/api/Schema/snapshots/nope'), 404, 'NOT_FOUND', 'Schema.SnapshotNotFound');

    assert.deepEqual(controlData(await c.get('/api/Schema/diff?from=1&to=main'), 200, 'Schema', 'diffed'), { from: 1, to: 'main', added: ['Tag'], removed: ['Customer'], changed: [] });
    assert.deepEqual(controlData(await c.get('/api/Schema/diff?from=main&to=0'), 200), { from: 'main', to: 0, added: [], removed: ['Tag'], changed: [] });
    expectError(await c.get('/api/Schema/diff?from=1&to=no-such-branch'), 404, 'NOT_FOUND', 'Schema.BranchNotFound');
    expectError(await c.get('/api/Schema/diff?from=42&to=main'), 404, 'NOT_FOUND', 'Schema.PublicationNotFound');
  });

  it('migrate/apply: several changes as one publication and one entry', async () => {
    const c = await project();
    await defineEntity(c, TAG);
    const r = controlData(await c.post('/api/Schema/migrate/apply', { changes: [
      { action: 'create', definition: CUSTOMER },
      { action: 'create', definition: ORDER },
      { action: 'alter', definition: { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }, { name: 'color', type: 'String', nullable: true }] } },
      { action: 'delete', entityName: 'Tag' },
    ] }), 200, 'Schema', 'migrated');
    assert.deepEqual(Object.keys(r).sort(), ['journalId', 'publicationVersion']);
    assert.equal(r.publicationVersion, 2);
    assert.deepEqual(await entityNames(c), ['Customer', 'Order']);
    const [entry] = await journal(c);
    assert.equal(entry.id, r.journalId);
    assert.equal(entry.change.action, 'migrate');
    assert.equal(entry.state, 'applied');
    assert.deepEqual(entry.change.changes.map((x: any) => [x.action, x.entityName]), [['create', 'Customer'], ['create', 'Order'], ['alter', 'Tag'], ['delete', 'Tag']]);
    const cust = await c.post('/api/customers', { email: 'a@example.com' });
    expectStatus(cust, 201);
    expectStatus(await c.post('/api/orders', { total: 3, customer: cust.body.data.id }), 201);
    assert.deepEqual(controlData(await c.get('/api/Schema/migration-history/Order'), 200).map((e: any) => e.id), [r.journalId]);
  });

  it('migrate/apply: any failing change answers its 4xx and applies nothing', async () => {
    const c = await project();
    await defineEntity(c, CUSTOMER);
    expectStatus(await c.post('/api/customers', { email: 'a@example.com' }), 201);
    const before = await journal(c);
    // A bad definition in the second change.
    expectError(await c.post('/api/Schema/migrate/apply', { changes: [
      { action: 'create', definition: TAG },
      { action: 'create', definition: { entityName: 'Bad', fields: [{ name: 'x', type: 'Nope' }] } },
    ] }), 422, 'VALIDATION_FAILED', 'Schema.UnknownFieldType');
    // Existing rows refuse the last change (a required field without a default): the first two were valid.
    const rows = await c.post('/api/Schema/migrate/apply', { changes: [
      { action: 'create', definition: TAG },
      { action: 'alter', definition: { entityName: 'Customer', fields: [...CUSTOMER.fields, { name: 'note', type: 'String', nullable: true }] } },
      { action: 'alter', definition: { entityName: 'Customer', fields: [...CUSTOMER.fields, { name: 'note', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: false }] } },
    ] });
    expectError(rows, 422, 'VALIDATION_FAILED', 'Schema.ExistingRowsViolate');
    expectError(await c.post('/api/Schema/migrate/apply', { changes: [] }), 422, 'VALIDATION_FAILED', 'Schema.InvalidBody', 'changes');
    expectError(await c.post('/api/Schema/migrate/apply', { changes: [{ action: 'explode', entityName: 'Customer' }] }), 422, 'VALIDATION_FAILED', 'Schema.InvalidChange', 'changes[0].action');
    expectError(await c.post('/api/Schema/migrate/apply', { changes: [{ action: 'delete', entityName: 'Nope' }] }), 404, 'NOT_FOUND', 'Schema.EntityNotFound');
    assert.equal(await version(c), 1);
    assert.deepEqual(await entityNames(c), ['Customer']);
    assert.deepEqual(await journal(c), before);
    expectError(await c.get('/api/tags'), 404, 'NOT_FOUND', 'Route.Unknown');
    const list = await c.get('/api/customers');
    expectStatus(list, 200);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].note, undefined);
  });

  it('entities/batch creates in one publication (any order of references); delete-batch drops in one', async () => {
    const c = await project();
    const b = controlData(await c.post('/api/Schema/entities/batch', { entities: [ORDER, CUSTOMER, TAG] }), 201, 'Schema');
    assert.equal(b.publicationVersion, 1);
    assert.deepEqual(await entityNames(c), ['Customer', 'Order', 'Tag']);
    const [entry] = await journal(c);
    assert.equal(entry.change.action, 'batch');
    assert.equal(entry.id, b.journalId);
    expectError(await c.post('/api/Schema/entities/batch', { entities: [{ entityName: 'Other', fields: [] }, CUSTOMER] }), 409, 'CONFLICT', 'Schema.EntityExists');
    expectError(await c.post('/api/Schema/entities/batch', { entities: 'nope' }), 422, 'VALIDATION_FAILED', 'Schema.InvalidBody', 'entities');
    assert.equal(await version(c), 1);
    expectError(await c.post('/api/Schema/entities/delete-batch', { entityNames: ['Customer'] }), 409, 'CONFLICT', 'Schema.EntityReferenced');
    const d = controlData(await c.post('/api/Schema/entities/delete-batch', { entityNames: ['Customer', 'Order'] }), 200, 'Schema');
    assert.equal(d.publicationVersion, 2);
    assert.deepEqual(await entityNames(c), ['Tag']);
    expectError(await c.post('/api/Schema/entities/delete-batch', { entityNames: ['Tag', 'Ghost'] }), 404, 'NOT_FOUND', 'Schema.EntityNotFound');
    assert.deepEqual(await entityNames(c), ['Tag']);
    // The spec's DELETE entities/batch is the same operation.
    assert.equal(controlData(await c.delete('/api/Schema/entities/batch', { entityNames: ['Tag'] }), 200, 'Schema').publicationVersion, 3);
    assert.deepEqual(await entityNames(c), []);
  });

  it('migrate/rollback reverts an entry and every later one in one publication; unknown id 404', async () => {
    const c = await project();
    const e1 = (await defineEntity(c, CUSTOMER)).data; // 1
    expectStatus(await c.post('/api/customers', { email: 'kept@example.com' }), 201);
    const e2 = (await c.put('/api/Schema/entities', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] })).body.data; // 2
    expectStatus(await c.post('/api/customers', { email: 'b@example.com', phone: '555' }), 201);
    const e3 = (await defineEntity(c, TAG)).data; // 3
    const r = controlData(await c.post(`/api/Schema/migrate/rollback/${e2.journalId}`), 200, 'Schema');
    assert.deepEqual(Object.keys(r).sort(), ['journalId', 'publicationVersion']);
    assert.equal(r.publicationVersion, 4);
    assert.deepEqual(await entityNames(c), ['Customer']);
    const rows = await c.get('/api/customers?sort=email');
    expectStatus(rows, 200);
    assert.deepEqual(rows.body.data.map((x: any) => [x.email, x.phone]), [['b@example.com', undefined], ['kept@example.com', undefined]]);
    const entries = await journal(c);
    assert.deepEqual(entries.map((e) => [e.publicationVersion, e.change.action, e.state]), [[4, 'rollback', 'applied'], [3, 'create', 'rolledBack'], [2, 'alter', 'rolledBack'], [1, 'create', 'applied']]);
    assert.equal(entries[0].id, r.journalId);
    assert.equal(entries[0].change.journalId, e2.journalId);
    void e3;
    // A rolled-back entry cannot be rolled back again; an unknown one is 404.
    expectError(await c.post(`/api/Schema/migrate/rollback/${e2.journalId}`), 409, 'CONFLICT', 'Schema.JournalEntryNotApplied');
    expectError(await c.post(`/api/Schema/migrate/rollback/${randomUUID()}`), 404, 'NOT_FOUND', 'Schema.JournalEntryNotFound');
    expectError(await c.post('/api/Schema/migrate/rollback/not-an-id'), 404, 'NOT_FOUND', 'Schema.JournalEntryNotFound');
    // Rolling back the first entry drops the entity and its rows.
    controlData(await c.post(`/api/Schema/migrate/rollback/${e1.journalId}`), 200);
    assert.deepEqual(await entityNames(c), []);
    expectError(await c.get('/api/customers'), 404, 'NOT_FOUND', 'Route.Unknown');
  });

  it('recover on an entry that was not interrupted answers it unchanged; unknown 404', async () => {
    const c = await project();
    const e1 = (await defineEntity(c, CUSTOMER)).data;
    const rec = controlData(await c.post(`/api/Schema/journal/${e1.journalId}/recover`), 200, 'SchemaJournal', 'recovered');
    assert.equal(rec.id, e1.journalId);
    assert.equal(rec.state, 'applied');
    assert.equal(await version(c), 1);
    expectError(await c.post(`/api/Schema/journal/${randomUUID()}/recover`), 404, 'NOT_FOUND', 'Schema.JournalEntryNotFound');
  });

  it('a project user without admin authority gets 403 on every mutating route', async () => {
    const c = await project();
    const e1 = (await defineEntity(c, CUSTOMER)).data;
    const user = c.with({ token: await projectUserToken(c) });
    const routes: Array<[string, unknown]> = [
      ['/api/Schema/migrate/apply', { changes: [{ action: 'create', definition: TAG }] }],
      [`/api/Schema/migrate/rollback/${e1.journalId}`, {}],
      ['/api/Schema/entities/batch', { entities: [TAG] }],
      ['/api/Schema/entities/delete-batch', { entityNames: ['Customer'] }],
      ['/api/Schema/snapshots', {}],
      [`/api/Schema/journal/${e1.journalId}/recover`, {}],
      ['/api/SchemaTransition', { entityName: 'Customer', kind: 'renameField', field: 'email', newName: 'mail' }],
      [`/api/SchemaTransition/${randomUUID()}/execute`, {}],
      [`/api/SchemaTransition/${randomUUID()}/rollback`, {}],
    ];
    for (const [path, body] of routes) {
      const r = await user.post(path, body);
      assert.equal(r.status, 403, `${path}: ${r.status}`);
      assert.equal(r.body.error.code, 'ACCESS_DENIED');
    }
    expectStatus(await user.request('DELETE', '/api/Schema/entities/batch', { entityNames: ['Customer'] }), 403);
    assert.deepEqual(controlData(await c.get('/api/SchemaTransition'), 200), []);
    assert.equal(await version(c), 1);
  });
});
