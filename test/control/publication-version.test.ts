/**
 * CONTRACT "Deployments": every project-scoped response names the publication that
 * served it in `X-Service-Publication-Version` (REST success and error, control plane,
 * GraphQL over HTTP, MCP), `/api/openapi.json`'s `x-publication-version` names the same
 * version, and so does the `publicationVersion` of the events a write made.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';
import { controlData, newSlug } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const version = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));

forEachBackend('publication version header', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  async function eventsOf(c: Client, correlationId: string): Promise<any[]> {
    for (let i = 0; i < 100; i++) {
      const r = await c.get(`/api/events?filter=${encodeURIComponent(JSON.stringify({ correlationId }))}`);
      expectStatus(r, 200);
      if (r.body.data.length > 0) return r.body.data;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.fail('no event');
  }

  it('REST, control plane, openapi, GraphQL, MCP and events name the serving version; a branch header names that branch head', async () => {
    const boot = await bootstrapProject(server.url, server.adminToken, newSlug());
    const c = boot.client;
    await defineEntity(c, CUSTOMER);
    const head = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    assert.ok(head >= 1);

    const corr = randomUUID();
    const created = await c.post('/api/customers', { email: 'a@example.com' }, { 'X-Service-Correlation-Id': corr });
    expectStatus(created, 201);
    assert.equal(version(created), head);
    assert.equal(version(await c.get('/api/customers')), head);
    // Errors after the scope was resolved carry it too; an unknown collection as well.
    const missing = await c.get(`/api/customers/${randomUUID()}`);
    expectStatus(missing, 404);
    assert.equal(version(missing), head);
    assert.equal(version(await c.get('/api/nothings')), head);
    assert.equal(version(await c.get('/api/branches')), head, 'control-plane routes are project-scoped');

    const openapi = await c.get('/api/openapi.json');
    expectStatus(openapi, 200);
    assert.equal(openapi.body['x-publication-version'], head);
    assert.equal(version(openapi), head);

    const gql = await c.post('/api/graphql', { query: '{ __typename }' });
    expectStatus(gql, 200);
    assert.equal(version(gql), head);

    const mcp = await fetch(`${server.url}/mcp/${boot.tenant}/${boot.project}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    assert.equal(mcp.status, 200);
    assert.equal(Number(mcp.headers.get('x-service-publication-version')), head);

    const events = await eventsOf(c, corr);
    assert.equal(events[0].publicationVersion, head);

    // A branch with its own schema change answers with its head, main keeps its own.
    controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    const dev = c.with({ branch: 'dev' });
    expectStatus(await dev.post('/api/Schema/entities', { entityName: 'Tag', fields: [{ name: 'x', type: 'Int', nullable: true }] }), 201);
    const devHead = controlData(await c.get('/api/branches/dev'), 200).head.publicationVersion;
    assert.ok(devHead > head);
    assert.equal(version(await dev.get('/api/tags')), devHead);
    assert.equal((await dev.get('/api/openapi.json')).body['x-publication-version'], devHead);
    assert.equal(version(await c.get('/api/customers')), head);

    // No scope, no header: a route that names no project.
    const plain = await fetch(`${server.url}/api/version`);
    assert.equal(plain.headers.get('x-service-publication-version'), null);
  });
});
