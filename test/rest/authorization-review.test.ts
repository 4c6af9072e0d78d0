/**
 * Regressions found by the adversarial review of the authorization stack
 * (issue 10): each test failed over real HTTP before its fix.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';

const OWN = { owner: { eq: { $actor: 'subjectId' } } };

forEachBackend('authorization review', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  const users: Array<{ client: Client; subjectId: string }> = [];

  const register = async (): Promise<{ client: Client; subjectId: string }> => {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const client = anon.with({ token: login.body.accessToken });
    const me = await client.get('/api/identity/me');
    return { client, subjectId: me.body.data.subjectId };
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    await defineEntity(admin, {
      entityName: 'Order',
      fields: [
        { name: 'owner', type: 'ID', nullable: false },
        { name: 'total', type: 'Int', nullable: true },
        { name: 'region', type: 'String', nullable: true },
      ],
    });
    for (const body of [
      { role: 'authenticated', grant: 'entity:Order:read', rowFilter: OWN, fields: ['owner', 'region'] },
      { role: 'authenticated', grant: 'entity:Order:insert', check: OWN },
    ]) expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, body), 201);
    users.push(await register(), await register());
  });
  after(async () => {
    await server?.close();
  });

  it('an Idempotency-Key replay never answers one caller with another caller\'s write (row outside the filter, masked field)', async () => {
    const [a, b] = users as [typeof users[0], typeof users[0]];
    const key = `review-${randomUUID()}`;
    // The admin writes a row for A with a total A may not see, under a key A then reuses with the same body.
    const body = { owner: a.subjectId, total: 99, region: 'eu' };
    const byAdmin = await admin.post('/api/orders', body, { 'Idempotency-Key': key });
    expectStatus(byAdmin, 201);
    assert.equal(byAdmin.body.data.total, 99);
    const byA = await a.client.post('/api/orders', body, { 'Idempotency-Key': key });
    expectStatus(byA, 201);
    assert.equal(byA.headers.get('idempotent-replayed'), null, 'A\'s request is its own, not the admin\'s replayed');
    assert.notEqual(byA.body.data.id, byAdmin.body.data.id);
    assert.equal('total' in byA.body.data, false, 'total is masked from A');
    // B sends A's body under A's key: never A's row back; B's own check refuses the write.
    const byB = await b.client.post('/api/orders', body, { 'Idempotency-Key': key });
    expectError(byB, 403, 'ACCESS_DENIED', 'Access.DeniedByPolicy');
    assert.equal(byB.body.data, undefined);
    // The same caller still gets its replay.
    const again = await a.client.post('/api/orders', body, { 'Idempotency-Key': key });
    expectStatus(again, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.data.id, byA.body.data.id);
  });
});
