/**
 * Branch copy of entities that reference each other in a cycle
 * (docs/branches.md "Copy-on-create"): a self-reference (Employee.manager →
 * Employee, a row managing itself included) and a two-entity cycle (A.b → B,
 * B.a → A) copy with their rows and references, and the branch's tables
 * enforce the references afterwards.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug } from './support.js';

const EMPLOYEE = { entityName: 'Employee', fields: [{ name: 'name', type: 'String', nullable: false }, { name: 'manager', type: 'ID', nullable: true, references: 'Employee' }] };
const A = { entityName: 'A', fields: [{ name: 'label', type: 'String', nullable: true }] };
const B = { entityName: 'B', fields: [{ name: 'label', type: 'String', nullable: true }, { name: 'a', type: 'ID', nullable: true, references: 'A' }] };
const A_WITH_B = { entityName: 'A', fields: [...A.fields, { name: 'b', type: 'ID', nullable: true, references: 'B' }] };

const created = async (c: Client, path: string, body: unknown): Promise<string> => {
  const r = await c.post(path, body);
  expectStatus(r, 201);
  return r.body.data.id;
};

forEachBackend('branch copy of reference cycles', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  it('a self-reference and a two-entity cycle copy with their rows; the branch enforces the references', async () => {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, EMPLOYEE);
    await defineEntity(c, A);
    await defineEntity(c, B);
    expectStatus(await c.put('/api/Schema/entities', A_WITH_B), 200);

    // Employee: a boss who manages herself, and a report. Inserted in an order where the report's row comes after its manager's.
    const boss = await created(c, '/api/employees', { name: 'boss' });
    expectStatus(await c.patch(`/api/employees/${boss}`, { manager: boss }), 200);
    const report = await created(c, '/api/employees', { name: 'report', manager: boss });
    // A ↔ B: a1.b = b1 and b1.a = a1.
    const a1 = await created(c, '/api/as', { label: 'a1' });
    const b1 = await created(c, '/api/bs', { label: 'b1', a: a1 });
    expectStatus(await c.patch(`/api/as/${a1}`, { b: b1 }), 200);

    controlData(await c.post('/api/branches', { name: 'cycles' }), 201, 'Branch', 'created');
    const br = c.with({ branch: 'cycles' });

    const employees = (await br.get('/api/employees?sort=name')).body.data.map((e: any) => [e.id, e.name, e.manager]);
    assert.deepEqual(employees, [[boss, 'boss', boss], [report, 'report', boss]]);
    const a = (await br.get(`/api/as/${a1}`)).body.data;
    const b = (await br.get(`/api/bs/${b1}`)).body.data;
    assert.deepEqual([a.label, a.b, b.label, b.a], ['a1', b1, 'b1', a1]);

    // Writes on the branch enforce the references: an unknown target is refused, a referenced row cannot go.
    expectError(await br.post('/api/employees', { name: 'ghost', manager: randomUUID() }), 422, 'VALIDATION_FAILED', 'EmployeeValidation.ReferenceNotFound', 'manager');
    expectError(await br.patch(`/api/as/${a1}`, { b: randomUUID() }), 422, 'VALIDATION_FAILED', 'AValidation.ReferenceNotFound', 'b');
    expectError(await br.delete(`/api/bs/${b1}`), 409, 'CONFLICT', 'BValidation.ReferencedByOtherRows');
    expectError(await br.delete(`/api/employees/${boss}`), 409, 'CONFLICT', 'EmployeeValidation.ReferencedByOtherRows');
    // A valid write works, and main does not see it.
    await created(br, '/api/employees', { name: 'new', manager: report });
    assert.equal((await c.get('/api/employees')).body.data.length, 2);
    assert.equal((await br.get('/api/employees')).body.data.length, 3);

    // A sandbox seeded from main copies the same way.
    const sandbox = controlData(await c.post('/api/sandboxes', { branch: 'main', seedFrom: 'main' }), 201);
    const sb = c.with({ branch: sandbox.branch });
    assert.equal((await sb.get(`/api/as/${a1}`)).body.data.b, b1);
    expectError(await sb.delete(`/api/as/${a1}`), 409, 'CONFLICT', 'AValidation.ReferencedByOtherRows');
  });
});
