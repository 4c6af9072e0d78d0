/**
 * Control plane over HTTP: tenants, projects and their hierarchy, project
 * state, scope isolation, the /v1 base, correlation ids and restarts.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const newSlug = (prefix = 't'): string => `${prefix}${randomUUID().slice(0, 8)}`;



/** Asserts the control-plane envelope and returns `data`. */
function controlData(r: Reply, status: number, surface: string, state: string): any {
  expectStatus(r, status);
  assert.deepEqual(Object.keys(r.body).sort(), ['correlationId', 'data', 'state', 'surface']);
  assert.equal(r.body.surface, surface);
  assert.equal(r.body.state, state);
  assert.equal(r.body.correlationId, r.headers.get('x-service-correlation-id'));
  return r.body.data;
}

forEachBackend('control plane', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  async function createTenant(slug = newSlug()): Promise<Json> {
    return controlData(await admin.post('/api/TenantRecord', { slug, name: `Tenant ${slug}` }), 201, 'TenantRecord', 'created');
  }
  async function createProject(tenant: string, slug: string, parentProjectId?: string): Promise<Json> {
    const body = { tenant, slug, name: `Project ${slug}`, ...(parentProjectId === undefined ? {} : { parentProjectId }) };
    return controlData(await admin.post('/api/projects/create', body), 201, 'Project', 'created');
  }

  it('TenantRecord: create, read, list, rename, delete', async () => {
    const slug = newSlug();
    const t = await createTenant(slug);
    assert.match(t.id, UUID);
    assert.equal(t.slug, slug);
    assert.equal(t.name, `Tenant ${slug}`);
    assert.equal(t.state, 'active');
    assert.ok(Number.isFinite(Date.parse(t.createdAt)));

    expectError(await admin.post('/api/TenantRecord', { slug, name: 'again' }), 409, 'CONFLICT', 'Tenant.SlugTaken', 'slug');
    for (const bad of ['Upper', '-lead', 'trail-', 'has space', '', 'a'.repeat(64)]) {
      expectError(await admin.post('/api/TenantRecord', { slug: bad, name: 'x' }), 422, 'VALIDATION_FAILED', 'Tenant.InvalidSlug', 'slug');
    }
    expectError(await admin.post('/api/TenantRecord', { slug: newSlug(), name: 'x', extra: 1 }), 422, 'VALIDATION_FAILED', 'Tenant.UnknownProperty', 'extra');
    expectError(await admin.post('/api/TenantRecord', { slug: newSlug() }), 422, 'VALIDATION_FAILED', 'Tenant.MissingProperty', 'name');

    assert.deepEqual(controlData(await admin.get(`/api/TenantRecord/${t.id}`), 200, 'TenantRecord', 'read'), t);
    assert.deepEqual(controlData(await admin.get(`/api/TenantRecord/${slug}`), 200, 'TenantRecord', 'read'), t);
    const listed = controlData(await admin.get('/api/TenantRecord'), 200, 'TenantRecord', 'listed') as Json[];
    assert.deepEqual(listed.filter((x) => x.id === t.id), [t]);

    const renamed = controlData(await admin.put(`/api/TenantRecord/${t.id}`, { name: 'Renamed' }), 200, 'TenantRecord', 'updated');
    assert.equal(renamed.name, 'Renamed');
    assert.equal(renamed.slug, slug);
    assert.equal(controlData(await admin.get(`/api/TenantRecord/${t.id}`), 200, 'TenantRecord', 'read').name, 'Renamed');

    // A tenant with projects cannot be deleted; an empty one can, once.
    const p = await createProject(slug, 'only');
    expectError(await admin.delete(`/api/TenantRecord/${t.id}`), 409, 'CONFLICT', 'Tenant.HasProjects');
    expectStatus(await admin.delete(`/api/ProjectRecord/${p.id}`), 204);
    const del = await admin.delete(`/api/TenantRecord/${t.id}`);
    expectStatus(del, 204);
    assert.equal(del.text, '');
    expectError(await admin.get(`/api/TenantRecord/${t.id}`), 404, 'NOT_FOUND', 'Tenant.NotFound');
    expectError(await admin.put(`/api/TenantRecord/${t.id}`, { name: 'x' }), 404, 'NOT_FOUND', 'Tenant.NotFound');
    expectError(await admin.delete(`/api/TenantRecord/${t.id}`), 404, 'NOT_FOUND', 'Tenant.NotFound');
    expectError(await admin.get(`/api/TenantRecord/${randomUUID()}`), 404, 'NOT_FOUND', 'Tenant.NotFound');
    // The slug is free again.
    await createTenant(slug);
  });

  it('projects: create by tenant slug or id, resolve, and per-tenant slugs', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const bySlug = await createProject(a.slug, 'shop');
    assert.match(bySlug.id, UUID);
    assert.equal(bySlug.tenantId, a.id);
    assert.equal(bySlug.slug, 'shop');
    assert.equal(bySlug.parentProjectId, null);
    assert.equal(bySlug.state, 'active');
    assert.deepEqual(bySlug.settings, {});
    const byId = await createProject(b.id, 'shop');
    assert.equal(byId.tenantId, b.id);
    assert.notEqual(byId.id, bySlug.id);

    expectError(await admin.post('/api/projects/create', { tenant: a.slug, slug: 'shop', name: 'dup' }), 409, 'CONFLICT', 'Project.SlugTaken', 'slug');
    expectError(await admin.post('/api/projects/create', { tenant: a.slug, slug: 'Bad Slug', name: 'x' }), 422, 'VALIDATION_FAILED', 'Project.InvalidSlug', 'slug');
    expectError(await admin.post('/api/projects/create', { tenant: newSlug('missing'), slug: 'x', name: 'x' }), 404, 'NOT_FOUND', 'Tenant.NotFound');
    expectError(await admin.post('/api/projects/create', { tenant: a.slug, slug: 'x', name: 'x', parentProjectId: byId.id }), 404, 'NOT_FOUND', 'Project.ParentNotFound');

    const resolved = controlData(await admin.get(`/api/projects/resolve?tenant=${a.slug}&project=shop`), 200, 'Project', 'resolved');
    assert.deepEqual(resolved, { ...bySlug, tenantSlug: a.slug });
    const resolvedB = controlData(await admin.get(`/api/projects/resolve?tenant=${b.id}&project=${byId.id}`), 200, 'Project', 'resolved');
    assert.equal(resolvedB.id, byId.id);
    const fromHeaders = await admin.with({ tenant: b.slug, project: 'shop' }).get('/api/projects/resolve');
    assert.equal(controlData(fromHeaders, 200, 'Project', 'resolved').id, byId.id);
    expectError(await admin.get(`/api/projects/resolve?tenant=${a.slug}&project=nothing`), 404, 'NOT_FOUND', 'Project.NotFound');
    // A project id from another tenant does not resolve.
    expectError(await admin.get(`/api/projects/resolve?tenant=${a.slug}&project=${byId.id}`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get('/api/projects/resolve'), 422, 'VALIDATION_FAILED', 'Project.ResolveNeedsScope');
    // A NUL (it used to reach SQL as a 500) is refused before anything reads it: 422 naming where it was.
    expectError(await admin.get(`/api/projects/resolve?tenant=%00&project=shop`), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'tenant');
    expectError(await admin.get(`/api/projects/resolve?tenant=${a.slug}&project=sh%00op`), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'project');
    expectError(await admin.get('/api/TenantRecord/%00'), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'id');
    expectError(await admin.get(`/api/ProjectRecord?tenant=a%00b`), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'tenant');
    expectError(await admin.post('/api/projects/create', { tenant: 'UPPER', slug: 'x', name: 'x' }), 404, 'NOT_FOUND', 'Tenant.NotFound');
  });

  it('a three-level hierarchy reads children, descendants and ancestors in order', async () => {
    const t = await createTenant();
    const root = await createProject(t.slug, 'root');
    const child = await createProject(t.id, 'child', root.id);
    const sibling = await createProject(t.slug, 'sibling', root.id);
    const grand = controlData(await admin.post(`/api/projects/${child.id}/children`, { slug: 'grand', name: 'Grand' }), 201, 'Project', 'created');
    assert.equal(child.parentProjectId, root.id);
    assert.equal(grand.parentProjectId, child.id);
    assert.equal(grand.tenantId, t.id);

    const ids = (r: Reply, state = 'listed'): string[] => (controlData(r, 200, 'Project', state) as Json[]).map((p) => p.id);
    assert.deepEqual(ids(await admin.get(`/api/projects/${root.id}/children`)), [child.id, sibling.id]);
    assert.deepEqual(ids(await admin.get(`/api/projects/${child.id}/children`)), [grand.id]);
    assert.deepEqual(ids(await admin.get(`/api/projects/${grand.id}/children`)), []);
    assert.deepEqual(ids(await admin.get(`/api/projects/${root.id}/descendants`)), [child.id, sibling.id, grand.id]);
    assert.deepEqual(ids(await admin.get(`/api/projects/${grand.id}/ancestors`)), [child.id, root.id]);
    assert.deepEqual(ids(await admin.get(`/api/projects/${root.id}/ancestors`)), []);
    const desc = controlData(await admin.get(`/api/projects/${root.id}/descendants`), 200, 'Project', 'listed') as Json[];
    assert.deepEqual(desc.find((p) => p.id === grand.id), grand);
    expectError(await admin.get(`/api/projects/${randomUUID()}/children`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.post(`/api/projects/${randomUUID()}/children`, { slug: 'x', name: 'x' }), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.post(`/api/projects/${root.id}/children`, { slug: 'grand', name: 'dup' }), 409, 'CONFLICT', 'Project.SlugTaken', 'slug');

    // A project with children cannot be deleted; leaves first, then up the tree.
    expectError(await admin.delete(`/api/ProjectRecord/${root.id}`), 409, 'CONFLICT', 'Project.HasChildren');
    expectError(await admin.delete(`/api/ProjectRecord/${child.id}`), 409, 'CONFLICT', 'Project.HasChildren');
    expectStatus(await admin.delete(`/api/ProjectRecord/${grand.id}`), 204);
    assert.deepEqual(ids(await admin.get(`/api/projects/${root.id}/descendants`)), [child.id, sibling.id]);
    expectStatus(await admin.delete(`/api/ProjectRecord/${child.id}`), 204);
    expectStatus(await admin.delete(`/api/ProjectRecord/${sibling.id}`), 204);
    expectStatus(await admin.delete(`/api/ProjectRecord/${root.id}`), 204);
    expectError(await admin.get(`/api/ProjectRecord/${root.id}`), 404, 'NOT_FOUND', 'Project.NotFound');
  });

  it('ProjectRecord CRUD, settings and state', async () => {
    const t = await createTenant();
    const p = controlData(await admin.post('/api/ProjectRecord', { tenant: t.slug, slug: 'rec', name: 'Record' }), 201, 'Project', 'created');
    assert.deepEqual(controlData(await admin.get(`/api/ProjectRecord/${p.id}`), 200, 'ProjectRecord', 'read'), p);
    const listed = controlData(await admin.get(`/api/ProjectRecord?tenant=${t.slug}`), 200, 'ProjectRecord', 'listed') as Json[];
    assert.deepEqual(listed, [p]);
    const all = controlData(await admin.get('/api/ProjectRecord'), 200, 'ProjectRecord', 'listed') as Json[];
    assert.ok(all.some((x) => x.id === p.id));

    const updated = controlData(await admin.put(`/api/ProjectRecord/${p.id}`, { name: 'Renamed', settings: { registration: 'open', colour: 'teal' } }), 200, 'ProjectRecord', 'updated');
    assert.equal(updated.name, 'Renamed');
    assert.deepEqual(updated.settings, { registration: 'open', colour: 'teal' });
    assert.equal(updated.state, 'active');
    const archived = controlData(await admin.put(`/api/ProjectRecord/${p.id}`, { state: 'archived' }), 200, 'ProjectRecord', 'updated');
    assert.equal(archived.state, 'archived');
    assert.equal(archived.name, 'Renamed');
    assert.deepEqual(archived.settings, { registration: 'open', colour: 'teal' });
    expectError(await admin.put(`/api/ProjectRecord/${p.id}`, { state: 'frozen' }), 422, 'VALIDATION_FAILED', 'Project.InvalidState', 'state');
    expectError(await admin.put(`/api/ProjectRecord/${p.id}`, { settings: [] }), 422, 'VALIDATION_FAILED', 'Project.InvalidProperty', 'settings');
    expectError(await admin.put(`/api/ProjectRecord/${p.id}`, { slug: 'new' }), 422, 'VALIDATION_FAILED', 'Project.UnknownProperty', 'slug');
    // jsonb refuses NUL characters; that is the caller's 422, not a 500, naming the value or key.
    expectError(await admin.put(`/api/ProjectRecord/${p.id}`, { settings: { a: 'x\u0000y' } }), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'settings.a');
    expectError(await admin.put(`/api/ProjectRecord/${p.id}`, { settings: { nested: [{ ['k\u0000']: 1 }] } }), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'settings.nested[0].k\\u0000');
    assert.deepEqual(controlData(await admin.get(`/api/ProjectRecord/${p.id}`), 200, 'ProjectRecord', 'read'), { ...archived });

    expectStatus(await admin.delete(`/api/ProjectRecord/${p.id}`), 204);
    expectError(await admin.get(`/api/ProjectRecord/${p.id}`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.put(`/api/ProjectRecord/${p.id}`, { name: 'x' }), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.delete(`/api/ProjectRecord/${p.id}`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get('/api/ProjectRecord/not-a-uuid'), 404, 'NOT_FOUND', 'Project.NotFound');
    // The slug is free again inside the tenant.
    controlData(await admin.post('/api/ProjectRecord', { tenant: t.id, slug: 'rec', name: 'Again' }), 201, 'Project', 'created');
  });

  it('a suspended project refuses users with 403 Project.Suspended (archived: Project.Archived), admins still work, resume restores', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    await defineEntity(p.client, { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: false }] });
    expectStatus(await admin.post(`/api/projects/${p.projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Note:read' }), 201);
    const anonymous = p.client.with({ token: null });
    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    expectStatus(await anonymous.post('/api/identity/register', { email, password: 'correct horse 42' }), 201);
    const login = await anonymous.post('/api/identity/login', { email, password: 'correct horse 42' });
    expectStatus(login, 200);
    const user = p.client.with({ token: login.body.accessToken });
    expectStatus(await p.client.post('/api/notes', { text: 'one' }), 201);
    assert.deepEqual((await user.get('/api/notes')).body.data.map((n: Json) => n.text), ['one']);

    const suspended = controlData(await admin.post(`/api/projects/${p.projectId}/suspend`), 200, 'Project', 'suspended');
    assert.equal(suspended.state, 'suspended');
    expectError(await user.get('/api/notes'), 403, 'ACCESS_DENIED', 'Project.Suspended');
    expectError(await anonymous.post('/api/identity/login', { email, password: 'correct horse 42' }), 403, 'ACCESS_DENIED', 'Project.Suspended');
    expectStatus(await p.client.post('/api/notes', { text: 'two' }), 201);
    assert.equal((await p.client.get('/api/notes')).body.data.length, 2);

    const resumed = controlData(await admin.post(`/api/projects/${p.projectId}/resume`), 200, 'Project', 'active');
    assert.equal(resumed.state, 'active');
    assert.deepEqual((await user.get('/api/notes?sort=createdAt')).body.data.map((n: Json) => n.text), ['one', 'two']);

    // ProjectRecord PUT state and archive have the same effect.
    controlData(await admin.put(`/api/ProjectRecord/${p.projectId}`, { state: 'suspended' }), 200, 'ProjectRecord', 'updated');
    expectError(await user.get('/api/notes'), 403, 'ACCESS_DENIED', 'Project.Suspended');
    controlData(await admin.post(`/api/projects/${p.projectId}/archive`), 200, 'Project', 'archived');
    expectError(await user.get('/api/notes'), 403, 'ACCESS_DENIED', 'Project.Archived');
    controlData(await admin.post(`/api/projects/${p.projectId}/resume`), 200, 'Project', 'active');
    expectStatus(await user.get('/api/notes'), 200);
    expectError(await admin.post(`/api/projects/${randomUUID()}/suspend`), 404, 'NOT_FOUND', 'Project.NotFound');
  });

  it('scope headers cannot reach another tenant\'s project', async () => {
    const a = await bootstrapProject(server.url, server.adminToken, newSlug());
    const b = await bootstrapProject(server.url, server.adminToken, newSlug());
    await defineEntity(b.client, { entityName: 'Secret', fields: [{ name: 'v', type: 'String', nullable: false }] });
    expectStatus(await b.client.post('/api/secrets', { v: 'x' }), 201);
    // Tenant A with B's project id, or with a project slug only B has.
    expectError(await admin.with({ tenant: a.tenant, project: b.projectId }).get('/api/secrets'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    expectError(await admin.with({ tenant: a.tenantId, project: b.projectId }).get('/api/Schema/entities/metadata'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    await createProject(b.tenant, 'bonly');
    expectError(await admin.with({ tenant: a.tenant, project: 'bonly' }).get('/api/Schema/journal'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    // Same slug `app` in both tenants: each header pair reaches its own project.
    expectError(await a.client.get('/api/secrets'), 404, 'NOT_FOUND', 'Route.Unknown');
    expectStatus(await admin.with({ tenant: b.tenantId, project: b.projectId }).get('/api/secrets'), 200);
  });

  it('/v1 serves the same routes as /api', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    await defineEntity(p.client, { entityName: 'Item', fields: [{ name: 'n', type: 'Int', nullable: false }] });
    const viaApi = await admin.get(`/api/TenantRecord/${p.tenantId}`);
    const viaV1 = await admin.get(`/v1/TenantRecord/${p.tenantId}`);
    assert.deepEqual(controlData(viaV1, 200, 'TenantRecord', 'read'), controlData(viaApi, 200, 'TenantRecord', 'read'));
    const created = controlData(await admin.post('/v1/projects/create', { tenant: p.tenant, slug: 'viav1', name: 'V1' }), 201, 'Project', 'created');
    assert.equal(controlData(await admin.get(`/api/ProjectRecord/${created.id}`), 200, 'ProjectRecord', 'read').slug, 'viav1');

    const row = await p.client.post('/v1/items', { n: 7 });
    expectStatus(row, 201);
    const read = await p.client.get(`/api/items/${row.body.data.id}`);
    assert.deepEqual(read.body.data, row.body.data);
    assert.deepEqual((await p.client.get(`/v1/items/${row.body.data.id}`)).body.data, row.body.data);
    assert.deepEqual((await p.client.get('/v1/Schema/entities/metadata')).body.data, (await p.client.get('/api/Schema/entities/metadata')).body.data);
    expectError(await p.client.get('/v1/nothings'), 404, 'NOT_FOUND', 'Route.Unknown');
    expectError(await admin.get('/v2/TenantRecord'), 404, 'NOT_FOUND', 'Route.Unknown');
  });

  it('every response carries X-Service-Correlation-Id and a well-formed supplied one is echoed', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    const replies: Reply[] = [
      await admin.get('/api/TenantRecord'),
      await admin.post('/api/TenantRecord', { slug: 'Bad Slug', name: 'x' }),
      await admin.get('/api/no/such/route/here/at/all'),
      await admin.get('/nowhere'),
      await admin.with({ token: null }).get('/api/TenantRecord'),
      await admin.delete(`/api/ProjectRecord/${(await createProject(p.tenant, 'gone')).id}`),
      await p.client.post('/api/Schema/entities', '{ not json', { 'content-type': 'application/json' }),
    ];
    const seen = new Set<string>();
    for (const r of replies) {
      const id = r.headers.get('x-service-correlation-id');
      assert.ok(id !== null && UUID.test(id), `status ${r.status} lacks a correlation id`);
      if (r.body?.error !== undefined) assert.equal(r.body.error.correlationId, id);
      if (r.body?.correlationId !== undefined) assert.equal(r.body.correlationId, id);
      seen.add(id);
    }
    assert.equal(seen.size, replies.length);
    assert.equal(replies[5]!.status, 204);
    expectError(replies[6]!, 422, 'VALIDATION_FAILED', 'Request.MalformedJson');

    const supplied = `trace-${randomUUID()}`;
    const ok = await admin.get(`/api/TenantRecord/${p.tenantId}`, { 'x-service-correlation-id': supplied });
    assert.equal(ok.headers.get('x-service-correlation-id'), supplied);
    assert.equal(ok.body.correlationId, supplied);
    const err = await admin.get(`/api/TenantRecord/${randomUUID()}`, { 'x-service-correlation-id': supplied });
    assert.equal(err.headers.get('x-service-correlation-id'), supplied);
    assert.equal(errorOf(err).correlationId, supplied);
    // Malformed ones (too short, bad characters) are replaced by a fresh id.
    for (const bad of ['short', 'has spaces in it', 'x'.repeat(129)]) {
      const r = await admin.get('/api/TenantRecord', { 'x-service-correlation-id': bad });
      assert.match(r.headers.get('x-service-correlation-id')!, UUID);
    }
  });

  it('data survives a restart', async () => {
    const first = await startServer({ backend, persistent: true });
    let second: TestServer | undefined;
    try {
      const p = await bootstrapProject(first.url, first.adminToken, newSlug());
      await defineEntity(p.client, { entityName: 'Keep', fields: [{ name: 'label', type: 'String', nullable: false }] });
      const row = await p.client.post('/api/keeps', { label: 'persisted' });
      expectStatus(row, 201);
      await first.stop();

      second = await startServer({ backend, reuse: { dataDir: first.dataDir, databaseUrl: first.databaseUrl } });
      const admin2 = new Client(second.url, { token: second.adminToken });
      const tenant = controlData(await admin2.get(`/api/TenantRecord/${p.tenantId}`), 200, 'TenantRecord', 'read');
      assert.equal(tenant.slug, p.tenant);
      const project = controlData(await admin2.get(`/api/ProjectRecord/${p.projectId}`), 200, 'ProjectRecord', 'read');
      assert.equal(project.slug, 'app');
      const scoped = admin2.with({ tenant: p.tenant, project: p.project });
      const meta = await scoped.get('/api/Schema/entities/metadata');
      expectStatus(meta, 200);
      assert.equal(meta.body.data.publicationVersion, 1);
      assert.deepEqual(meta.body.data.entities.map((e: Json) => e.entityName), ['Keep']);
      const read = await scoped.get(`/api/keeps/${row.body.data.id}`);
      expectStatus(read, 200);
      assert.deepEqual(read.body.data, row.body.data);
      // And it keeps working: the next change is version 2.
      const next = await scoped.post('/api/Schema/entities', { entityName: 'More', fields: [] });
      expectStatus(next, 201);
      assert.equal(next.body.data.publicationVersion, 2);
    } finally {
      await second?.close();
      await first.close();
    }
  });
});
