/**
 * X-Service-Branch over gRPC (CONTRACT: "Branches"): the `x-service-branch` metadata scopes
 * reads and writes to the branch, as REST's header does; an unknown branch is NOT_FOUND.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, fetchProto, loadProto, metadata, serviceTrailers, unary } from '../grpc/support.js';
import { controlData, newSlug } from './support.js';

forEachBackend('branch isolation over gRPC', (backend: Backend) => {
  let server: TestServer;
  let customers: any;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    customers?.close();
    await server?.close();
  });

  it('metadata x-service-branch reads and writes the branch only', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    const c: Client = p.client;
    await defineEntity(c, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }] });
    expectStatus(await c.post('/api/customers', { email: 'ada@example.com' }), 201);
    controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    customers = clientOf(loadProto(await fetchProto(c)), 'CustomerService', server.node.grpcPort);
    const mainMd = metadata(server.adminToken, p.tenant, p.project);
    const devMd = metadata(server.adminToken, p.tenant, p.project);
    devMd.set('x-service-branch', 'dev');

    const created = await unary(customers, 'Create', { customer: { email: 'grpc-dev@example.com' } }, devMd);
    assert.equal(created.error, null, created.error?.message);
    const emails = async (md: grpc.Metadata): Promise<string[]> => {
      const r = await unary(customers, 'List', { page_size: 50 }, md);
      assert.equal(r.error, null, r.error?.message);
      return r.value.items.map((x: any) => x.email).sort();
    };
    assert.deepEqual(await emails(devMd), ['ada@example.com', 'grpc-dev@example.com']);
    assert.deepEqual(await emails(mainMd), ['ada@example.com']);
    // REST agrees with gRPC about what is where.
    assert.deepEqual((await c.with({ branch: 'dev' }).get(`/api/customers/${created.value.id}`)).status, 200);
    assert.deepEqual((await c.get(`/api/customers/${created.value.id}`)).status, 404);

    const unknownMd = metadata(server.adminToken, p.tenant, p.project);
    unknownMd.set('x-service-branch', 'nope');
    const unknown = await unary(customers, 'List', { page_size: 1 }, unknownMd);
    assert.equal(unknown.error?.code, grpc.status.NOT_FOUND);
    assert.equal(serviceTrailers(unknown.trailers).reasonCode, 'Scope.BranchNotFound');
  });
});
