/**
 * Online schema transitions over HTTP (CONTRACT: Control plane, "Schema transitions"):
 * preview and bad bodies, renameField / splitField / changeType through expand →
 * backfill → contract with reads and writes served throughout, rollback while running
 * and after completion, and a changeType whose values do not convert (failed, nothing lost).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug } from './support.js';

const PERSON = { entityName: 'Item', fields: [{ name: 'name', type: 'String', nullable: false }, { name: 'age', type: 'Int', nullable: true }, { name: 'code', type: 'String', nullable: true }] };

forEachBackend('schema transitions', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  const project = async (): Promise<Client> => {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, PERSON);
    return c;
  };
  const fields = async (c: Client): Promise<Array<{ name: string; type: string; nullable: boolean }>> =>
    controlData(await c.get('/api/Schema/entities/metadata/Item'), 200).definition.fields;
  const seed = async (c: Client, n: number): Promise<Map<string, string>> => {
    const names = new Map<string, string>();
    for (let i = 0; i < n; i += 10) {
      const replies = await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => c.post('/api/items', { name: `Ada${i + j} Love lace`, age: i + j, code: String(i + j) })));
      for (const r of replies) {
        expectStatus(r, 201);
        names.set(r.body.data.id, r.body.data.name);
      }
    }
    return names;
  };
  const waitFor = async (c: Client, id: string, states: string[]): Promise<any> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const t = controlData(await c.get(`/api/SchemaTransition/${id}`), 200, 'SchemaTransition', 'read');
      if (states.includes(t.state)) return t;
      assert.ok(Date.now() < deadline, `transition still ${t.state}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('preview answers the phases and applies nothing; bad kinds and bodies are 422, an unknown entity 404', async () => {
    const c = await project();
    const p = controlData(await c.post('/api/SchemaTransition/preview', { entityName: 'Item', kind: 'renameField', field: 'name', newName: 'fullName' }), 200, 'SchemaTransition', 'previewed');
    assert.deepEqual(p, { kind: 'renameField', entityName: 'Item', phases: ['expand', 'backfill', 'contract'] });
    for (const path of ['/api/SchemaTransition/preview', '/api/SchemaTransition']) {
      expectError(await c.post(path, { entityName: 'Item', kind: 'Unspecified', field: 'name' }), 422, 'VALIDATION_FAILED', 'SchemaTransition.UnknownKind', 'kind');
      expectError(await c.post(path, { entityName: 'Item', kind: 'dropEverything', field: 'name' }), 422, 'VALIDATION_FAILED', 'SchemaTransition.UnknownKind', 'kind');
      expectError(await c.post(path, { entityName: 'Item', kind: 'renameField', field: 'nope', newName: 'x' }), 422, 'VALIDATION_FAILED', 'SchemaTransition.UnknownField', 'field');
      expectError(await c.post(path, { entityName: 'Item', kind: 'renameField', field: 'name', newName: 'age' }), 422, 'VALIDATION_FAILED', 'Schema.DuplicateField');
      expectError(await c.post(path, { entityName: 'Item', kind: 'splitField', field: 'name', into: ['a'], separator: ' ' }), 422, 'VALIDATION_FAILED', 'SchemaTransition.InvalidBody', 'into');
      expectError(await c.post(path, { entityName: 'Item', kind: 'changeType', field: 'age', toType: 'Nope' }), 422, 'VALIDATION_FAILED', 'SchemaTransition.InvalidType', 'toType');
      expectError(await c.post(path, { entityName: 'Ghost', kind: 'renameField', field: 'name', newName: 'x' }), 404, 'NOT_FOUND', 'Schema.EntityNotFound');
    }
    assert.deepEqual(controlData(await c.get('/api/SchemaTransition'), 200, 'SchemaTransition', 'listed'), []);
    assert.deepEqual((await fields(c)).map((f) => f.name), ['name', 'age', 'code']);
    expectError(await c.get(`/api/SchemaTransition/${randomUUID()}`), 404, 'NOT_FOUND', 'SchemaTransition.NotFound');
    expectError(await c.post(`/api/SchemaTransition/${randomUUID()}/execute`), 404, 'NOT_FOUND', 'SchemaTransition.NotFound');
  });

  it('renameField runs online: both names while running, every row readable under one of them, then only the new; rollback restores the old', async () => {
    const c = await project();
    const names = await seed(c, 60);
    const created = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'renameField', field: 'name', newName: 'fullName', batchRows: 10, pauseMs: 60 }), 201, 'SchemaTransition', 'created');
    assert.equal(created.state, 'pending');
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(controlData(await c.get(`/api/SchemaTransition/${created.id}`), 200).phase, null);

    const exec = controlData(await c.post(`/api/SchemaTransition/${created.id}/execute`), 202, 'SchemaTransition');
    assert.equal(exec.state, 'running');
    // Expand published both names.
    assert.deepEqual((await fields(c)).map((f) => f.name), ['name', 'age', 'code', 'fullName']);
    expectError(await c.post(`/api/SchemaTransition/${created.id}/execute`), 409, 'CONFLICT', 'SchemaTransition.NotPending');
    // Other changes to the moving entity wait (409); other entities are free.
    expectError(await c.put('/api/Schema/entities', PERSON), 409, 'CONFLICT', 'Schema.TransitionRunning');

    let sawRunning = false;
    let written = 0;
    for (;;) {
      const t = controlData(await c.get(`/api/SchemaTransition/${created.id}`), 200);
      if (t.state === 'running') sawRunning = true;
      // Reads and writes that do not name the moving field, and a write naming the old one.
      const list = await c.get('/api/items?pageSize=200');
      expectStatus(list, 200);
      for (const row of list.body.data) {
        const want = names.get(row.id);
        if (want !== undefined) assert.equal(row.fullName ?? row.name, want, `row ${row.id} lost its value`);
      }
      const some = [...names.keys()][written % names.size]!;
      expectStatus(await c.patch(`/api/items/${some}`, { age: written }), 200);
      if (t.state === 'running' && t.phase === 'backfill') {
        const w = await c.post('/api/items', { name: `New${written} Person`, age: 1 });
        // The contract may land between the state read and this write: then, and only then, the old name is gone.
        if (w.status === 422) assert.equal(controlData(await c.get(`/api/SchemaTransition/${created.id}`), 200).phase, 'contract');
        else {
          expectStatus(w, 201);
          names.set(w.body.data.id, `New${written} Person`);
        }
      }
      written++;
      if (t.state !== 'running') {
        assert.equal(t.state, 'completed');
        assert.equal(t.phase, 'contract');
        break;
      }
    }
    assert.ok(sawRunning);
    const after = await fields(c);
    assert.deepEqual(after.map((f) => f.name), ['age', 'code', 'fullName']);
    assert.equal(after.find((f) => f.name === 'fullName')!.nullable, false);
    const rows = (await c.get('/api/items?pageSize=200')).body.data;
    assert.equal(rows.length, names.size);
    for (const row of rows) {
      assert.equal(row.name, undefined);
      assert.equal(row.fullName, names.get(row.id));
    }
    expectError(await c.post('/api/items', { name: 'x' }), 422, 'VALIDATION_FAILED', 'ItemValidation.UnknownField', 'name');
    expectStatus(await c.post('/api/items', { fullName: 'After Rename' }), 201);
    const journal = controlData(await c.get('/api/Schema/journal'), 200);
    assert.deepEqual(journal.slice(0, 2).map((e: any) => [e.change.action, e.change.phase, e.change.transitionId]), [['transition', 'contract', created.id], ['transition', 'expand', created.id]]);

    // Rollback after completion: the old name and values come back.
    const rb = controlData(await c.post(`/api/SchemaTransition/${created.id}/rollback`), 202);
    assert.equal(rb.state, 'rolledBack');
    assert.deepEqual((await fields(c)).map((f) => f.name), ['name', 'age', 'code']);
    const back = (await c.get('/api/items?pageSize=200')).body.data;
    for (const row of back) if (names.has(row.id)) assert.equal(row.name, names.get(row.id));
    assert.ok(back.some((r: any) => r.name === 'After Rename'));
    expectError(await c.post(`/api/SchemaTransition/${created.id}/rollback`), 409, 'CONFLICT', 'SchemaTransition.NotRollbackable');
  });

  it('splitField fills the parts (the last keeps the rest); rollback joins them back', async () => {
    const c = await project();
    const names = await seed(c, 15);
    const t = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'splitField', field: 'name', into: ['first', 'last'], separator: ' ', batchRows: 5, pauseMs: 0 }), 201);
    expectStatus(await c.post(`/api/SchemaTransition/${t.id}/execute`), 202);
    await waitFor(c, t.id, ['completed']);
    assert.deepEqual((await fields(c)).map((f) => f.name), ['age', 'code', 'first', 'last']);
    const rows = (await c.get('/api/items?pageSize=200')).body.data;
    for (const row of rows) assert.equal(`${row.first} ${row.last}`, names.get(row.id));
    assert.ok(rows.every((r: any) => r.last === 'Love lace'));
    expectStatus(await c.post(`/api/SchemaTransition/${t.id}/rollback`), 202);
    assert.equal((await waitFor(c, t.id, ['rolledBack'])).state, 'rolledBack');
    for (const row of (await c.get('/api/items?pageSize=200')).body.data) assert.equal(row.name, names.get(row.id));
  });

  it('changeType converts values; values that do not convert fail it with nothing lost; rollback while running restores the shape', async () => {
    const c = await project();
    await seed(c, 12);
    const ok = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'changeType', field: 'code', toType: 'Int', batchRows: 5, pauseMs: 0 }), 201);
    expectStatus(await c.post(`/api/SchemaTransition/${ok.id}/execute`), 202);
    await waitFor(c, ok.id, ['completed']);
    assert.equal((await fields(c)).find((f) => f.name === 'code')!.type, 'Int');
    const rows = (await c.get('/api/items?pageSize=200&sort=age')).body.data;
    assert.deepEqual(rows.map((r: any) => r.code), rows.map((r: any) => r.age));

    const back = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'changeType', field: 'code', toType: 'String' }), 201);
    expectStatus(await c.post(`/api/SchemaTransition/${back.id}/execute`), 202);
    await waitFor(c, back.id, ['completed']);
    expectStatus(await c.post('/api/items', { name: 'Bad Code', code: 'not-a-number' }), 201);
    const bad = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'changeType', field: 'code', toType: 'Int' }), 201);
    expectStatus(await c.post(`/api/SchemaTransition/${bad.id}/execute`), 202);
    const failed = await waitFor(c, bad.id, ['failed', 'completed']);
    assert.equal(failed.state, 'failed');
    assert.match(failed.error, /do not convert/);
    assert.equal((await fields(c)).find((f) => f.name === 'code')!.type, 'String');
    assert.ok((await c.get('/api/items?pageSize=200')).body.data.some((r: any) => r.code === 'not-a-number'));

    const slow = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'renameField', field: 'age', newName: 'years', batchRows: 1, pauseMs: 2000 }), 201);
    expectStatus(await c.post(`/api/SchemaTransition/${slow.id}/execute`), 202);
    assert.ok((await fields(c)).some((f) => f.name === 'years'));
    const rb = controlData(await c.post(`/api/SchemaTransition/${slow.id}/rollback`), 202);
    assert.equal(rb.state, 'rolledBack');
    assert.deepEqual((await fields(c)).map((f) => f.name), ['name', 'age', 'code']);
    const listed = controlData(await c.get('/api/SchemaTransition'), 200) as any[];
    assert.deepEqual(listed.map((t) => t.state), ['rolledBack', 'failed', 'completed', 'completed']);
  });

  it('changeType keeps the old column after contract: a rollback of the completed transition gives every unchanged row its old value back exactly', async () => {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, { entityName: 'Item', fields: [{ name: 'code', type: 'String', nullable: false, unique: true }, { name: 'price', type: 'Decimal', nullable: true }] });
    const ids: Record<string, string> = {};
    for (const [code, price] of [['007', '1.50'], ['12', '2.25'], ['0042', null]] as const) {
      const r = await c.post('/api/items', { code, price });
      expectStatus(r, 201);
      ids[code] = r.body.data.id;
    }
    for (const [field, toType] of [['code', 'Int'], ['price', 'Int']]) {
      const t = controlData(await c.post('/api/SchemaTransition', { entityName: 'Item', kind: 'changeType', field, toType, pauseMs: 0 }), 201);
      expectStatus(await c.post(`/api/SchemaTransition/${t.id}/execute`), 202);
      await waitFor(c, t.id, ['completed']);
      ids[field] = t.id;
    }
    const row = (await c.get(`/api/items/${ids['007']}`)).body.data;
    assert.deepEqual([row.code, row.price], [7, 2]);
    assert.deepEqual(Object.keys(row).sort(), ['code', 'concurrencyToken', 'createdAt', 'id', 'price', 'updatedAt'], 'the kept column is not shown');
    // The new column has the field's constraints (unique, required); the kept one none (an insert without it works).
    expectError(await c.post('/api/items', { code: 12 }), 409, 'CONFLICT', 'ItemValidation.UniqueViolation', 'code');
    expectError(await c.post('/api/items', { price: 3 }), 422, 'VALIDATION_FAILED', 'ItemValidation.Required');
    const added = await c.post('/api/items', { code: 5, price: 9 });
    expectStatus(added, 201);
    expectStatus(await c.patch(`/api/items/${ids['12']}`, { code: 99 }), 200);

    // Rollback of both completed transitions (newest first): unchanged rows get their old text back ('007', not '7'; '1.50', not '2'),
    // changed and new rows their current value cast back; the old constraints are back.
    for (const field of ['price', 'code']) expectStatus(await c.post(`/api/SchemaTransition/${ids[field]}/rollback`), 202);
    const back = new Map(((await c.get('/api/items?pageSize=50')).body.data as any[]).map((r) => [r.id, [r.code, r.price]]));
    assert.deepEqual(back.get(ids['007']!), ['007', '1.50']);
    assert.deepEqual(back.get(ids['0042']!), ['0042', null]);
    assert.deepEqual(back.get(ids['12']!), ['99', '2.25']);
    assert.deepEqual(back.get(added.body.data.id), ['5', '9']);
    expectError(await c.post('/api/items', { code: '007' }), 409, 'CONFLICT', 'ItemValidation.UniqueViolation', 'code');
    const fieldsNow = controlData(await c.get('/api/Schema/entities/metadata/Item'), 200).definition.fields;
    assert.deepEqual(fieldsNow.map((f: any) => [f.name, f.type]), [['code', 'String'], ['price', 'Decimal']]);
  });
});
