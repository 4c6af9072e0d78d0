/**
 * A filter that reaches a related entity reads that entity: it needs
 * `entity:<Related>:read`, on every protocol that takes a filter (REST list,
 * count and relation list, realtime WebSocket and SSE). Without it, a count
 * per `like` probe spells out another entity's values one character at a
 * time.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const q = (filter: unknown): string => `filter=${encodeURIComponent(JSON.stringify(filter))}`;
const PROBE = { customer: { secretNote: { like: 'SECRET-A-1%' } } };

/** Sends one realtime subscribe and returns the answer to it. */
async function subscribeOnce(url: string, headers: Record<string, string>, entity: string, filter?: unknown): Promise<Json> {
  const ws = new WebSocket(url, [], { headers });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const reply = new Promise<Json>((resolve) => ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as Json;
      if (m.id === 's') resolve(m);
    }));
    ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity, ...(filter === undefined ? {} : { filter }) }));
    return await reply;
  } finally {
    ws.terminate();
  }
}

forEachBackend('filters on related entities need read on them', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let scopeHeaders: Record<string, string>;
  let customerId: string;

  /** A fresh user holding exactly `grants`. */
  const userWith = async (grants: string[]): Promise<Client> => {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const user = anon.with({ token: login.body.accessToken });
    const me = await user.get('/api/identity/me');
    for (const grant of grants) {
      expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { subjectId: me.body.data.subjectId, grant }), 201);
    }
    return user;
  };
  const denied = (r: Awaited<ReturnType<Client['get']>>, missing: string[]): void => {
    const e = expectError(r, 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(e.missingGrants, missing);
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    scopeHeaders = { 'x-service-tenant': p.tenant, 'x-service-project': p.project };
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }, { name: 'secretNote', type: 'String', nullable: true }] });
    await defineEntity(admin, { entityName: 'Product', fields: [{ name: 'cost', type: 'String', nullable: true }] });
    await defineEntity(admin, {
      entityName: 'Order',
      fields: [
        { name: 'total', type: 'Int', nullable: true },
        { name: 'customer', type: 'ID', nullable: true, references: 'Customer' },
        { name: 'product', type: 'ID', nullable: true, references: 'Product' },
      ],
    });
    const c = await admin.post('/api/customers', { email: 'a@example.com', secretNote: 'SECRET-A-123' });
    expectStatus(c, 201);
    customerId = c.body.data.id;
    const product = await admin.post('/api/products', { cost: 'COST-42' });
    expectStatus(product, 201);
    expectStatus(await admin.post('/api/orders', { total: 5, customer: customerId, product: product.body.data.id }), 201);
  });
  after(async () => {
    await server?.close();
  });

  it('REST: list and count with a filter into Customer are 403 without entity:Customer:read, wherever the related node sits', async () => {
    const user = await userWith(['entity:Order:*']);
    // The probe of the finding: the count would say whether the secret starts with 'SECRET-A-1'.
    denied(await user.get(`/api/orders/count?${q(PROBE)}`), ['entity:Customer:read']);
    denied(await user.get(`/api/orders?${q(PROBE)}`), ['entity:Customer:read']);
    denied(await user.get(`/api/orders?${q({ or: [{ total: { gt: 100 } }, { not: { customer: { secretNote: { like: 'S%' } } } }] })}&includeTotal=true`), ['entity:Customer:read']);
    denied(await user.get(`/api/orders/count?${q({ and: [{ customer: { email: { eq: 'a@example.com' } } }, { product: { cost: { like: 'C%' } } }] })}`), ['entity:Customer:read', 'entity:Product:read']);
    // A filter that is invalid inside Customer is still 403: a 422 would describe Customer's fields.
    denied(await user.get(`/api/orders?${q({ customer: { noSuchField: { eq: 1 } } })}`), ['entity:Customer:read']);
    // Own fields, and comparing the reference's own id value, reach no other entity.
    assert.equal((await user.get(`/api/orders/count?${q({ total: { eq: 5 } })}`)).body.data.count, 1);
    assert.equal((await user.get(`/api/orders/count?${q({ customer: { eq: customerId } })}`)).body.data.count, 1);
    // Sort names own columns only: a reference sorts by its id value, a path into Customer is no sort key.
    expectStatus(await user.get('/api/orders?sort=-customer'), 200);
    expectError(await user.get('/api/orders?sort=customer.secretNote'), 422, 'VALIDATION_FAILED', 'Query.UnknownSortField', 'sort');
    // With the grant, the same filter runs.
    const reader = await userWith(['entity:Order:*', 'entity:Customer:read']);
    assert.equal((await reader.get(`/api/orders/count?${q(PROBE)}`)).body.data.count, 1);
    assert.equal((await reader.get(`/api/orders?${q(PROBE)}`)).body.data.length, 1);
    // The admin holds every grant.
    assert.equal((await admin.get(`/api/orders/count?${q(PROBE)}`)).body.data.count, 1);
  });

  it('REST: a relation page takes the grants of its filter and include (on the owner entity)', async () => {
    const user = await userWith(['entity:Order:read', 'entity:Customer:read']);
    const path = `/api/customers/${customerId}/orders`;
    expectStatus(await user.get(path), 200);
    denied(await user.get(`${path}?${q({ product: { cost: { like: 'COST-4%' } } })}`), ['entity:Product:read']);
    denied(await user.get(`${path}?include=product`), ['entity:Product:read']);
    assert.equal((await admin.get(`${path}?${q({ product: { cost: { like: 'COST-4%' } } })}`)).body.data.length, 1);
  });

  it('realtime: a WebSocket subscribe or an SSE stream with such a filter is refused the same way', async () => {
    const user = await userWith(['entity:Order:*']);
    const token = user.scope.token!;
    const wsUrl = `${server.url.replace('http', 'ws')}/api/realtime`;
    const headers = { ...scopeHeaders, authorization: `Bearer ${token}` };
    const refused = await subscribeOnce(wsUrl, headers, 'Order', PROBE);
    assert.equal(refused.type, 'error');
    assert.equal(refused.status, 403);
    assert.equal(refused.code, 'ACCESS_DENIED');
    assert.equal(refused.reasonCode, 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(refused.missingGrants, ['entity:Customer:read']);
    assert.equal((await subscribeOnce(wsUrl, headers, 'Order', { total: { gt: 1 } })).type, 'subscribed');

    const sse = await fetch(`${server.url}/api/realtime/sse?entity=Order&${q(PROBE)}`, { headers });
    assert.equal(sse.status, 403, await sse.clone().text());
    const body = (await sse.json()) as Json;
    assert.equal(body.error.reasonCode, 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(body.error.missingGrants, ['entity:Customer:read']);
  });
});
