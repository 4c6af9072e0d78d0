/**
 * Discovery over HTTP: ContractProjection/descriptor and /cli (strong ETag,
 * If-None-Match → 304 with no body, a new ETag per publication),
 * Introspection/surface, Platform/admin-surface, DevBootstrapDescriptor and
 * ExecutionCapabilityMatrix.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, projectUserToken } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }] };
const ORDER = { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: false }, { name: 'customer', type: 'ID', nullable: true, references: 'Customer' }] };

forEachBackend('discovery', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let p: Awaited<ReturnType<typeof bootstrapProject>>;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
    p = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(p.client, CUSTOMER);
  });
  after(async () => {
    await server?.close();
  });

  for (const path of ['/api/ContractProjection/descriptor', '/api/ContractProjection/cli', '/api/Introspection/surface']) {
    it(`${path}: strong ETag of the body, 304 on If-None-Match, a new tag per publication`, async () => {
      const q = await bootstrapProject(server.url, server.adminToken);
      await defineEntity(q.client, CUSTOMER);
      const first = await q.client.get(path);
      expectStatus(first, 200);
      const etag = first.headers.get('etag')!;
      assert.match(etag, /^"[0-9a-f]{64}"$/, 'a strong, quoted validator');
      assert.equal(etag, `"${createHash('sha256').update(first.text).digest('hex')}"`, 'the hash of the exact body');
      const again = await q.client.get(path);
      assert.equal(again.headers.get('etag'), etag);
      assert.equal(again.text, first.text);

      for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const nm = await q.client.get(path, { 'if-none-match': inm });
        expectStatus(nm, 304);
        assert.equal(nm.text, '');
        assert.equal(nm.headers.get('etag'), etag);
      }
      expectStatus(await q.client.get(path, { 'if-none-match': '"other"' }), 200);

      await defineEntity(q.client, ORDER);
      const changed = await q.client.get(path, { 'if-none-match': etag });
      expectStatus(changed, 200);
      assert.notEqual(changed.headers.get('etag'), etag);
      assert.ok(changed.text.includes('Order'));
    });
  }

  it('the descriptor and CLI describe the publication; a project user may read them; anonymous 401; unknown scope 404', async () => {
    const d = (await p.client.get('/api/ContractProjection/descriptor')).body;
    assert.equal(d.publicationVersion, 1);
    assert.match(d.descriptorHash, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(d.entities.map((e: any) => e.entityName), ['Customer']);
    const list = d.operations.find((o: any) => o.operationId === 'Entity.Customer.List');
    assert.deepEqual([list.method, list.path], ['GET', '/customers']);
    assert.ok(list.bindings.includes('rest:Entity.Customer.List') && list.bindings.includes('graphql:Entity.Customer.List') && list.bindings.includes('mcp:Entity.Customer.List'));
    assert.ok(list.bindings.includes('grpc:Entity.Customer.List'));
    assert.equal(d.endpoints.mcp.endpoint, `/mcp/${p.tenant}/${p.project}`);
    assert.equal(d.endpoints.grpc.proto, '/grpc/proto/service-app.proto');
    const v1 = (await p.client.get('/v1/ContractProjection/descriptor')).body;
    assert.equal(v1.endpoints.rest.basePath, '/v1');

    const cli = (await p.client.get('/api/ContractProjection/cli')).body;
    const get = cli.commands.find((c: any) => c.name === 'customers get');
    assert.deepEqual([get.method, get.path, get.args, get.operationId], ['GET', '/api/customers/{id}', [{ name: 'id', required: true }], 'Entity.Customer.Read']);
    assert.ok(cli.commands.some((c: any) => c.name === 'customers create' && c.body === true && c.flags.some((f: any) => f.name === 'data')));
    const listCommand = cli.commands.find((c: any) => c.name === 'customers list');
    assert.deepEqual(listCommand.flags.map((f: any) => f.name), ['filter', 'sort', 'page-size', 'cursor', 'fields', 'include']);
    assert.equal(typeof listCommand.summary, 'string');
    // Platform commands come from the operations' contracts: flags from the declared body, admin-only ones say so.
    const branchCreate = cli.commands.find((c: any) => c.operationId === 'ControlPlane.Branch.Create');
    assert.deepEqual([branchCreate.name, branchCreate.method, branchCreate.path, branchCreate.authn], ['branch create', 'POST', '/api/branches', 'admin']);
    assert.deepEqual(branchCreate.flags, [{ name: 'name', type: 'string', required: true }, { name: 'base', type: 'string', required: false }]);
    const names = cli.commands.map((c: any) => c.name);
    assert.equal(new Set(names).size, names.length, 'command names are unique');

    const user = p.client.with({ token: await projectUserToken(p.client) });
    for (const path of ['/api/ContractProjection/descriptor', '/api/ContractProjection/cli', '/api/Introspection/surface']) {
      expectStatus(await user.get(path), 200);
      expectError(await p.client.with({ token: null }).get(path), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
      expectError(await admin.with({ tenant: p.tenant, project: 'nope' }).get(path), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    }
    const surface = (await user.get('/api/Introspection/surface')).body;
    assert.deepEqual(surface.entities.map((e: any) => e.collection), ['customers']);
    assert.deepEqual(surface.protocols.sort(), ['graphql', 'grpc', 'mcp', 'rest']);
    // Admin-only discovery refuses a project user.
    for (const path of ['/api/Platform/admin-surface', '/api/DevBootstrapDescriptor/descriptor', '/api/ExecutionCapabilityMatrix/matrix']) {
      expectError(await user.get(path), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    }
  });

  it('admin surface, dev bootstrap descriptor and capability matrix', async () => {
    const a = controlData(await admin.get('/api/Platform/admin-surface'), 200, 'AdminSurface');
    const families = a.families.map((f: any) => f.family);
    for (const f of ['TenantRecord', 'OrganizationRecord', 'ProjectRecord', 'version', 'Surface']) assert.ok(families.includes(f), f);
    const org = a.families.find((f: any) => f.family === 'OrganizationRecord');
    assert.ok(org.routes.some((r: any) => r.method === 'PUT' && r.path === '/api/OrganizationRecord/{id}'));
    assert.ok(!families.includes('ContractProjection'), 'routes any project user may call are not admin surface');

    const dev = controlData(await admin.get('/api/DevBootstrapDescriptor/descriptor'), 200, 'DevBootstrapDescriptor');
    assert.deepEqual(dev.steps.map((s: any) => s.path).slice(0, 2), ['/api/TenantRecord', '/api/projects/create']);
    assert.equal(dev.mode, 'single');
    assert.ok(!JSON.stringify(dev).includes(server.adminToken), 'never the token itself');

    const m = controlData(await admin.get('/api/ExecutionCapabilityMatrix/matrix'), 200, 'ExecutionCapabilityMatrix');
    assert.equal(m.matrix.rest.List, true);
    assert.equal(m.matrix.rest.Subscribe, false);
    assert.equal(m.matrix.graphql.Subscribe, true);
    assert.equal(m.matrix.graphql.BatchCreate, false);
    assert.deepEqual(Object.keys(m.matrix).sort(), [...m.protocols].sort());
  });
});
