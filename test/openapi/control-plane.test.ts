/**
 * The control-plane routes of issue 14 in the served OpenAPI document (docs/rest-api.md,
 * "OpenAPI: control-plane routes"): every such route of the REST route table (branches, sandboxes,
 * proposals, deployments, /Schema, /SchemaTransition, versioning, records, surfaces,
 * discovery) has a path and method with the route's operation id, security and scope, and
 * the document still validates as OpenAPI 3.1. A few real answers are checked against the
 * documented shapes, so the schemas describe what the server sends.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { STATIC_ROUTES, type StaticRoute } from '../../adapters/rest/routes.js';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';
import { assertValidOpenApi, deref, shape } from '../support/openapi-doc.js';

/** The routes of declared operations (runtime/operations/catalog.ts), taken from the route table the server serves. */
const CONTROL_ROUTES: StaticRoute[] = STATIC_ROUTES.filter((r) => r.spec.contract !== undefined);

const openApiPath = (routePath: string): string => `/${routePath.replace(/:(\w+)/g, '{$1}')}`;


/** The answer's control-plane envelope and its `data` record (or each list item) carry exactly what the operation's success schema documents. */
function assertAnswerDocumented(doc: Json, path: string, method: string, status: number, body: Json): void {
  const op = doc.paths[path][method];
  const envelope = deref(doc, op.responses[String(status)].content['application/json'].schema);
  assert.deepEqual(Object.keys(body).sort(), [...envelope.required].sort(), `${method} ${path}: envelope`);
  assert.equal(body.surface, envelope.properties.surface.const, `${method} ${path}: surface`);
  const state = envelope.properties.state;
  assert.ok(state.const === body.state || (state.enum ?? []).includes(body.state), `${method} ${path}: state ${body.state} documented`);
  let dataSchema = deref(doc, envelope.properties.data);
  const records: Json[] = Array.isArray(body.data) ? body.data : [body.data];
  if (dataSchema.type === 'array') dataSchema = dataSchema.items;
  const s = shape(doc, dataSchema);
  for (const r of records) {
    for (const k of s.required) assert.ok(k in r, `${method} ${path}: documented field ${k} missing`);
    for (const k of Object.keys(r)) assert.ok(s.known.includes(k), `${method} ${path}: field ${k} not documented`);
  }
}

it('takes the declared routes from the route table the server serves', () => {
  assert.ok(CONTROL_ROUTES.length > 0, `${CONTROL_ROUTES.length} declared routes`);
});

forEachBackend('OpenAPI: control-plane routes', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let doc: Json;

  before(async () => {
    server = await startServer({ backend });
    const boot = await bootstrapProject(server.url, server.adminToken);
    admin = boot.client;
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] });
    const r = await admin.get('/api/openapi.json');
    expectStatus(r, 200);
    doc = r.body;
  });
  after(async () => {
    await server?.close();
  });

  it('still validates as OpenAPI 3.1 with the control-plane routes in it', async () => {
    await assertValidOpenApi(doc);
  });

  it('documents every control-plane route with its operation id, security and scope', () => {
    const ids = new Set<string>();
    for (const r of CONTROL_ROUTES) {
      const path = openApiPath(r.path);
      const what = `${r.method} ${path}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      assert.ok(op, `${what} is documented`);
      // Aliases share their route's spec; operation ids are unique in a document, so the alias says so.
      assert.ok(op.operationId === r.spec.id || op.operationId === `${r.spec.id}Alias`, `${what}: operationId ${op.operationId} for ${r.spec.id}`);
      assert.ok(!ids.has(op.operationId), `${what}: operationId ${op.operationId} used twice`);
      ids.add(op.operationId);
      // No credential: no requirement, or the scope headers alone (an open route of a project, such as `/identity/login`).
      const credentialFree = Array.isArray(op.security) && (op.security as Json[]).every((s) => Object.keys(s).every((k) => k === 'tenantHeader' || k === 'projectHeader'));
      assert.equal(credentialFree, r.spec.authn === 'public', `${what}: public iff the route needs no credential`);
      if (r.spec.authn === 'admin') assert.ok(op.security.every((s: Json) => 'adminToken' in s), `${what}: admin token only`);
      const params = (op.parameters as Json[]).map((p) => deref(doc, p));
      const scoped = params.some((p) => p.in === 'header' && p.name === 'X-Service-Tenant');
      assert.equal(scoped, r.spec.scope === 'project', `${what}: scope headers iff the route is project-scoped`);
      for (const name of [...r.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)) {
        assert.ok(params.some((p) => p.in === 'path' && p.name === name), `${what}: path parameter ${name}`);
      }
      const errors = Object.keys(op.responses).filter((s) => /^[45]\d\d$|^default$/.test(s));
      assert.ok(errors.includes('default'), `${what}: default error response`);
      for (const s of errors) assert.equal(deref(doc, op.responses[s]).content['application/json'].schema.$ref, '#/components/schemas/ErrorEnvelope', `${what} ${s}`);
    }
  });

  it('describes what branch, sandbox, proposal and version routes answer', async () => {
    const created = await admin.post('/api/branches', { name: 'dev' });
    expectStatus(created, 201);
    assertAnswerDocumented(doc, '/branches', 'post', 201, created.body);
    assertAnswerDocumented(doc, '/branches', 'get', 200, (await admin.get('/api/branches')).body);
    const sandbox = await admin.post('/api/sandboxes', { branch: 'main', seedFrom: 'main' });
    expectStatus(sandbox, 201);
    assertAnswerDocumented(doc, '/sandboxes', 'post', 201, sandbox.body);
    expectStatus(await admin.with({ branch: 'dev' }).put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] }), 200);
    const p = await admin.post('/api/proposals', { title: 'age', base: 'main', head: 'dev' });
    expectStatus(p, 201);
    assertAnswerDocumented(doc, '/proposals', 'post', 201, p.body);
    const read = await admin.get(`/api/proposals/${p.body.data.id}`);
    assertAnswerDocumented(doc, '/proposals/{id}', 'get', 200, read.body);
    const merged = await admin.post(`/api/proposals/${p.body.data.id}/merge`, {});
    expectStatus(merged, 200);
    assertAnswerDocumented(doc, '/proposals/{id}/merge', 'post', 200, merged.body);
    assertAnswerDocumented(doc, '/Schema/journal', 'get', 200, (await admin.get('/api/Schema/journal')).body);
    const version = await new Client(server.url).get('/api/version');
    expectStatus(version, 200);
    assertAnswerDocumented(doc, '/version', 'get', 200, version.body);
  });

  it('describes what schema, deployment, record and surface routes answer', async () => {
    const altered = await admin.put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'tier', type: 'String', nullable: true }] });
    expectStatus(altered, 200);
    assertAnswerDocumented(doc, '/Schema/entities', 'put', 200, altered.body);
    const snapshot = await admin.post('/api/Schema/snapshots');
    expectStatus(snapshot, 201);
    assertAnswerDocumented(doc, '/Schema/snapshots', 'post', 201, snapshot.body);
    assertAnswerDocumented(doc, '/Schema/snapshots/{id}', 'get', 200, (await admin.get(`/api/Schema/snapshots/${snapshot.body.data.id}`)).body);
    const preview = await admin.post('/api/SchemaTransition/preview', { entityName: 'Customer', kind: 'renameField', field: 'tier', newName: 'level' });
    expectStatus(preview, 200);
    assertAnswerDocumented(doc, '/SchemaTransition/preview', 'post', 200, preview.body);
    const target = { branch: 'main' };
    const plan = await admin.post('/api/deployments/preview', { target });
    expectStatus(plan, 200);
    assertAnswerDocumented(doc, '/deployments/preview', 'post', 200, plan.body);
    const deployment = await admin.post('/api/deployments', { target });
    expectStatus(deployment, 202);
    assertAnswerDocumented(doc, '/deployments', 'post', 202, deployment.body);
    assertAnswerDocumented(doc, '/deployments/{id}', 'get', 200, (await admin.get(`/api/deployments/${deployment.body.data.id}`)).body);
    const unscoped = new Client(server.url, { token: server.adminToken });
    const org = await unscoped.post('/api/OrganizationRecord', { slug: 'acme', name: 'Acme', tenant: admin.scope.tenant });
    expectStatus(org, 201);
    assertAnswerDocumented(doc, '/OrganizationRecord', 'post', 201, org.body);
    assertAnswerDocumented(doc, '/root-project/current', 'get', 200, (await admin.get('/api/root-project/current')).body);
    const surface = await admin.post('/api/Surface', { name: 'billing', kind: 'Billing', version: '1.0.0' });
    expectStatus(surface, 201);
    assertAnswerDocumented(doc, '/Surface', 'post', 201, surface.body);
    assertAnswerDocumented(doc, '/Surface/{id}/is-installed', 'get', 200, (await admin.get(`/api/Surface/${surface.body.data.id}/is-installed`)).body);
  });

  it('describes what the read-only version, schema and discovery routes answer', async () => {
    const projectId = (await admin.get('/api/root-project/current')).body.data.id;
    const unscoped = new Client(server.url, { token: server.adminToken });
    const gets: Array<[Client, string, string]> = [
      [unscoped, `/version/projects/${projectId}`, '/version/projects/{projectId}'],
      [unscoped, `/version/projects/${projectId}/publication/1`, '/version/projects/{projectId}/publication/{publicationVersion}'],
      [unscoped, '/version/platform-baseline', '/version/platform-baseline'],
      [unscoped, '/Platform/admin-surface', '/Platform/admin-surface'],
      [unscoped, '/DevBootstrapDescriptor/descriptor', '/DevBootstrapDescriptor/descriptor'],
      [unscoped, '/ExecutionCapabilityMatrix/matrix', '/ExecutionCapabilityMatrix/matrix'],
      [admin, '/Schema/diff', '/Schema/diff'],
      [admin, '/Schema/entities/metadata', '/Schema/entities/metadata'],
      [admin, '/Schema/migration-history/Customer', '/Schema/migration-history/{entityName}'],
      [admin, '/sandboxes', '/sandboxes'],
      [admin, '/version/deprecations', '/version/deprecations'],
    ];
    for (const [client, url, path] of gets) {
      const r = await client.get(`/api${url}`);
      expectStatus(r, 200);
      assertAnswerDocumented(doc, path, 'get', 200, r.body);
    }
    const main = (await admin.get('/api/branches/main')).body.data;
    const protectedMain = await admin.put(`/api/Branch/branches/${main.id}/protection`, { requireProposal: false, requiredApprovals: 0 });
    expectStatus(protectedMain, 200);
    assertAnswerDocumented(doc, '/Branch/branches/{id}/protection', 'put', 200, protectedMain.body);
  });

  it('answers an unknown branch with a documented 404 in the error envelope', async () => {
    const r = await admin.get('/api/branches/no-such-branch');
    assert.equal(r.status, 404);
    assert.ok(doc.paths['/branches/{name}'].get.responses['404'], 'GET /branches/{name} documents 404');
    const envelope = deref(doc, { $ref: '#/components/schemas/ErrorEnvelope' });
    for (const k of envelope.properties.error.required) assert.ok(k in r.body.error, `error.${k}`);
  });
});
