/**
 * `/api/Webhook/...` is an alias of `/api/webhooks/...` for outbound
 * endpoints and deliveries (docs/webhooks.md): the same methods, tails and
 * operations, both in the route table and answered over HTTP.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { STATIC_ROUTES } from '../../adapters/rest/routes.js';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const OUTBOUND = /^(endpoints|deliveries)(\/|$)/;
const under = (base: string): string[] => STATIC_ROUTES
  .filter((r) => r.path.startsWith(`${base}/`) && OUTBOUND.test(r.path.slice(base.length + 1)))
  .map((r) => `${r.method} ${r.path.slice(base.length + 1)} → ${r.spec.id}`);

it('the route table serves every outbound webhooks route under Webhook/ too, with the same operation', () => {
  const routes = under('webhooks');
  assert.equal(routes.length, 10);
  assert.deepEqual(under('Webhook'), routes);
});

forEachBackend('webhook alias routes', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  before(async () => {
    server = await startServer({ backend });
    admin = (await bootstrapProject(server.url, server.adminToken)).client;
  });
  after(async () => {
    await server?.close();
  });

  it('answers the list routes alike under both paths', async () => {
    for (const tail of ['endpoints', 'deliveries']) {
      const a = await admin.get(`/api/webhooks/${tail}`);
      const b = await admin.get(`/api/Webhook/${tail}`);
      assert.equal(a.status, 200, tail);
      assert.deepEqual([b.status, b.body.data], [a.status, a.body.data], tail);
    }
  });
});
