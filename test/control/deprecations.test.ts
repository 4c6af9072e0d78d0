/**
 * Binding stability at dispatch (CONTRACT: Versioning): a Deprecated binding's
 * REST answers carry Deprecation, Sunset and Link, other bindings' none; a
 * Retired binding fails closed on REST, GraphQL and MCP while the project's
 * other bindings keep serving.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { connect, mcpErrorOf, setupProject, type Project } from '../mcp/support.js';
import { controlData } from './support.js';

const HEADERS = ['deprecation', 'sunset', 'link'];
const absent = (h: Headers): void => {
  for (const name of HEADERS) assert.equal(h.get(name), null, `${name} must be absent`);
};

forEachBackend('binding stability', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let admin: Client;
  let customerId: string;

  before(async () => {
    server = await startServer({ backend });
    p = await setupProject(server.url, server.adminToken);
    admin = p.admin;
    const c = await admin.post('/api/customers', { email: 'a@example.com' });
    expectStatus(c, 201);
    customerId = c.body.data.id;
  });
  after(async () => {
    await server?.close();
  });

  it('announce validates: 422 without a replacement, bad stability or date; 404 for an unknown binding; nothing recorded', async () => {
    expectError(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', sunsetAt: '2030-01-01T00:00:00Z' }), 422, 'VALIDATION_FAILED', 'Deprecation.ReplacementRequired', 'replacement');
    expectError(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', stability: 'Deprecated', replacement: '' }), 422, 'VALIDATION_FAILED', 'Deprecation.ReplacementRequired', 'replacement');
    expectError(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', stability: 'Gone' }), 422, 'VALIDATION_FAILED', 'Deprecation.InvalidStability', 'stability');
    expectError(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', replacement: '/api/v2/orders', sunsetAt: 'soon' }), 422, 'VALIDATION_FAILED', 'Deprecation.InvalidSunset', 'sunsetAt');
    expectError(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', replacement: 'a>\r\nX-Evil: 1' }), 422, 'VALIDATION_FAILED', 'Deprecation.InvalidReplacement', 'replacement');
    expectError(await admin.post('/api/version/deprecations/announce', { replacement: 'x' }), 422, 'VALIDATION_FAILED', 'Deprecation.MissingProperty', 'bindingId');
    expectError(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Nope.List', replacement: 'x' }), 404, 'NOT_FOUND', 'ExposureBinding.NotFound');
    expectError(await admin.with({ project: 'nope' }).post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', replacement: 'x' }), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    assert.deepEqual(controlData(await admin.get('/api/version/deprecations'), 200), []);
    absent((await admin.get('/api/orders')).headers);
  });

  it('a Deprecated binding answers with Deprecation, Sunset and Link; other bindings without', async () => {
    const before = Math.floor(Date.now() / 1000);
    const rec = controlData(await admin.post('/api/version/deprecations/announce', {
      bindingId: 'rest:Entity.Customer.List', replacement: '/api/v2/customers', sunsetAt: '2031-06-30T12:00:00Z',
    }), 200, 'Deprecation', 'announced');
    assert.deepEqual([rec.bindingId, rec.stability, rec.replacement, rec.sunsetAt], ['rest:Entity.Customer.List', 'Deprecated', '/api/v2/customers', '2031-06-30T12:00:00.000Z']);
    const announcedAt = Math.floor(Date.parse(rec.announcedAt) / 1000);
    assert.ok(announcedAt >= before - 5 && announcedAt <= Date.now() / 1000 + 5);
    const listed = controlData(await admin.get('/api/version/deprecations'), 200, 'Deprecation', 'listed');
    assert.deepEqual(listed, [rec]);

    const r = await admin.get('/api/customers');
    expectStatus(r, 200);
    assert.equal(r.headers.get('deprecation'), `@${announcedAt}`);
    assert.equal(r.headers.get('sunset'), 'Mon, 30 Jun 2031 12:00:00 GMT');
    assert.equal(r.headers.get('link'), '</api/v2/customers>; rel="successor-version"');
    assert.equal(r.body.data.length, 1, 'a deprecated binding still serves');
    // Other bindings of the same entity, and other entities, carry none of them.
    absent((await admin.get(`/api/customers/${customerId}`)).headers);
    absent((await admin.get('/api/customers/count')).headers);
    absent((await admin.get('/api/orders')).headers);
    absent((await admin.post('/graphql', { query: '{ customers { totalCount } }' })).headers);

    // Back to Stable: the headers go, the list empties.
    controlData(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Customer.List', stability: 'Stable' }), 200);
    absent((await admin.get('/api/customers')).headers);
    assert.deepEqual(controlData(await admin.get('/api/version/deprecations'), 200), []);
  });

  it('Retired fails closed on REST, GraphQL and MCP; the other bindings keep serving', async () => {
    // Each protocol's binding is retired on its own: with only the REST one retired, GraphQL still serves.
    controlData(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', stability: 'Retired' }), 200);
    expectError(await admin.get('/api/orders'), 404, 'NOT_FOUND', 'ExposureBinding.Retired');
    const stillServed = await admin.post('/graphql', { query: '{ orders { totalCount } }' });
    assert.equal(stillServed.body.errors, undefined);
    assert.equal(stillServed.body.data.orders.totalCount, 0);
    for (const bindingId of ['graphql:Entity.Order.List', 'mcp:Entity.Order.List']) {
      const rec = controlData(await admin.post('/api/version/deprecations/announce', { bindingId, stability: 'Retired' }), 200);
      assert.equal(rec.stability, 'Retired');
    }
    expectError(await admin.get('/api/orders'), 404, 'NOT_FOUND', 'ExposureBinding.Retired');
    expectError(await admin.get('/v1/orders'), 404, 'NOT_FOUND', 'ExposureBinding.Retired');
    expectStatus(await admin.get('/api/orders/count'), 200);
    const made = await admin.post('/api/orders', { total: '1.00', status: 'paid', customer: customerId });
    expectStatus(made, 201);
    expectStatus(await admin.get(`/api/orders/${made.body.data.id}`), 200);

    const gql = await admin.post('/graphql', { query: '{ orders { totalCount } }' });
    expectStatus(gql, 200);
    assert.equal(gql.body.errors.length, 1);
    assert.equal(gql.body.errors[0].extensions.reasonCode, 'ExposureBinding.Retired');
    assert.equal(gql.body.errors[0].extensions.code, 'NOT_FOUND');
    const other = await admin.post('/graphql', { query: '{ customers { totalCount } }' });
    assert.equal(other.body.errors, undefined);
    assert.equal(other.body.data.customers.totalCount, 1, 'the other root field is served');

    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const err = await mcpErrorOf(client.callTool({ name: 'Order.list', arguments: {} }));
      assert.equal((err.data as any).reasonCode, 'ExposureBinding.Retired');
      assert.equal((err.data as any).serviceCode, 'NOT_FOUND');
      assert.equal((await client.callTool({ name: 'Customer.list', arguments: {} })).isError, false);
    } finally {
      await client.close();
    }

    const listed = controlData(await admin.get('/api/version/deprecations'), 200) as any[];
    assert.deepEqual(listed.map((d) => d.bindingId).sort(), ['graphql:Entity.Order.List', 'mcp:Entity.Order.List', 'rest:Entity.Order.List']);
    // Un-retiring brings the binding back at once.
    controlData(await admin.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Order.List', stability: 'Beta' }), 200);
    expectStatus(await admin.get('/api/orders'), 200);
  });
});
