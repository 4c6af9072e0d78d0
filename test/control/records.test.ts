/**
 * Records over HTTP (CONTRACT: Control plane, Records): OrganizationRecord
 * CRUD, projects in organizations, ByOrganization, root-project/current and
 * adopt-template, with 403/404/422 on every route.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from './support.js';

forEachBackend('records', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  const createTenant = async (): Promise<any> => {
    const slug = newSlug();
    return controlData(await admin.post('/api/TenantRecord', { slug, name: `T ${slug}` }), 201);
  };

  it('OrganizationRecord: create, read, list, rename, delete, then 404', async () => {
    const t = await createTenant();
    const slug = newSlug('o');
    const org = controlData(await admin.post('/api/OrganizationRecord', { slug, name: 'Acme', tenant: t.slug }), 201, 'OrganizationRecord', 'created');
    assert.equal(org.slug, slug);
    assert.equal(org.name, 'Acme');
    assert.equal(org.tenantId, t.id);
    assert.match(org.id, /^[0-9a-f-]{36}$/);
    // tenant by id works too; a taken slug in the tenant is 409, in another tenant it is free
    expectError(await admin.post('/api/OrganizationRecord', { slug, name: 'x', tenant: t.id }), 409, 'CONFLICT', 'Organization.SlugTaken', 'slug');
    const t2 = await createTenant();
    controlData(await admin.post('/api/OrganizationRecord', { slug, name: 'Other', tenant: t2.id }), 201);

    assert.deepEqual(controlData(await admin.get(`/api/OrganizationRecord/${org.id}`), 200, 'OrganizationRecord', 'read'), org);
    const listed = controlData(await admin.get('/api/OrganizationRecord'), 200, 'OrganizationRecord', 'listed') as any[];
    assert.deepEqual(listed.filter((o) => o.id === org.id), [org]);
    const ofTenant = controlData(await admin.get(`/api/OrganizationRecord?tenant=${t.slug}`), 200) as any[];
    assert.deepEqual(ofTenant.map((o) => o.id), [org.id]);

    const renamed = controlData(await admin.put(`/api/OrganizationRecord/${org.id}`, { name: 'Acme Inc' }), 200, 'OrganizationRecord', 'updated');
    assert.equal(renamed.name, 'Acme Inc');
    assert.equal(renamed.slug, slug);
    assert.equal(controlData(await admin.get(`/api/OrganizationRecord/${org.id}`), 200).name, 'Acme Inc');
    // A null name is "not given", like an absent one (it used to reach the blank check and answer 500).
    assert.equal(controlData(await admin.put(`/api/OrganizationRecord/${org.id}`, { name: null }), 200, 'OrganizationRecord', 'updated').name, 'Acme Inc');
    expectError(await admin.put(`/api/OrganizationRecord/${org.id}`, { name: 5 }), 422, 'VALIDATION_FAILED', 'Organization.InvalidProperty', 'name');
    expectError(await admin.put(`/api/OrganizationRecord/${org.id}`, { name: 'x', slug: 'y' }), 422, 'VALIDATION_FAILED', 'Organization.UnknownProperty', 'slug');

    const del = await admin.delete(`/api/OrganizationRecord/${org.id}`);
    expectStatus(del, 204);
    assert.equal(del.text, '');
    expectError(await admin.get(`/api/OrganizationRecord/${org.id}`), 404, 'NOT_FOUND', 'Organization.NotFound');
    expectError(await admin.put(`/api/OrganizationRecord/${org.id}`, { name: 'x' }), 404, 'NOT_FOUND', 'Organization.NotFound');
    expectError(await admin.delete(`/api/OrganizationRecord/${org.id}`), 404, 'NOT_FOUND', 'Organization.NotFound');
  });

  it('OrganizationRecord: bad input is 422, unknown ids 404, nothing written', async () => {
    const t = await createTenant();
    for (const bad of ['Upper', '-x', 'has space', '', 'a'.repeat(64)]) {
      expectError(await admin.post('/api/OrganizationRecord', { slug: bad, name: 'x', tenant: t.id }), 422, 'VALIDATION_FAILED', 'Organization.InvalidSlug', 'slug');
    }
    expectError(await admin.post('/api/OrganizationRecord', { slug: newSlug(), name: 'x' }), 422, 'VALIDATION_FAILED', 'Organization.MissingProperty', 'tenant');
    expectError(await admin.post('/api/OrganizationRecord', { slug: newSlug(), name: 'x', tenant: t.id, extra: 1 }), 422, 'VALIDATION_FAILED', 'Organization.UnknownProperty', 'extra');
    expectError(await admin.post('/api/OrganizationRecord', { slug: newSlug(), name: 7, tenant: t.id }), 422, 'VALIDATION_FAILED', 'Organization.InvalidProperty', 'name');
    expectError(await admin.post('/api/OrganizationRecord', { slug: newSlug(), name: '  ', tenant: t.id }), 422, 'VALIDATION_FAILED', 'Organization.InvalidName', 'name');
    expectError(await admin.post('/api/OrganizationRecord', { slug: newSlug(), name: 'n'.repeat(201), tenant: t.id }), 422, 'VALIDATION_FAILED', 'Organization.InvalidProperty', 'name');
    expectError(await admin.post('/api/OrganizationRecord', []), 422, 'VALIDATION_FAILED', 'Organization.InvalidBody');
    expectError(await admin.post('/api/OrganizationRecord', '{"slug":'), 422, 'VALIDATION_FAILED', 'Request.MalformedJson');
    expectError(await admin.post('/api/OrganizationRecord', { slug: newSlug(), name: 'x', tenant: newSlug() }), 404, 'NOT_FOUND', 'Tenant.NotFound');
    expectError(await admin.get('/api/OrganizationRecord/not-a-uuid'), 422, 'VALIDATION_FAILED', 'Organization.InvalidId', 'id');
    expectError(await admin.get(`/api/OrganizationRecord/${randomUUID()}`), 404, 'NOT_FOUND', 'Organization.NotFound');
    expectError(await admin.get(`/api/OrganizationRecord?tenant=${newSlug()}`), 404, 'NOT_FOUND', 'Tenant.NotFound');
    assert.deepEqual(controlData(await admin.get(`/api/OrganizationRecord?tenant=${t.id}`), 200), []);
  });

  it('projects name an organization: create, ProjectRecord, ByOrganization, move, delete guard', async () => {
    const t = await createTenant();
    const org = controlData(await admin.post('/api/OrganizationRecord', { slug: newSlug('o'), name: 'O', tenant: t.id }), 201);
    const other = controlData(await admin.post('/api/OrganizationRecord', { slug: newSlug('o'), name: 'P', tenant: t.id }), 201);
    const a = controlData(await admin.post('/api/projects/create', { tenant: t.slug, slug: 'a', name: 'A', organizationId: org.id }), 201);
    assert.equal(a.organizationId, org.id);
    const b = controlData(await admin.post('/api/ProjectRecord', { tenant: t.id, slug: 'b', name: 'B', organizationId: org.id }), 201);
    assert.equal(b.organizationId, org.id);
    const c = controlData(await admin.post('/api/projects/create', { tenant: t.id, slug: 'c', name: 'C' }), 201);
    assert.equal(c.organizationId, null);
    assert.equal(controlData(await admin.get(`/api/ProjectRecord/${a.id}`), 200).organizationId, org.id);

    const byOrg = controlData(await admin.get(`/api/ProjectRecord/ByOrganization/${org.id}`), 200, 'ProjectRecord', 'listed') as any[];
    assert.deepEqual(byOrg.map((p) => p.id).sort(), [a.id, b.id].sort());
    assert.deepEqual(controlData(await admin.get(`/api/ProjectRecord/ByOrganization/${other.id}`), 200), []);
    expectError(await admin.get(`/api/ProjectRecord/ByOrganization/${randomUUID()}`), 404, 'NOT_FOUND', 'Organization.NotFound');
    expectError(await admin.get('/api/ProjectRecord/ByOrganization/nope'), 422, 'VALIDATION_FAILED', 'Organization.InvalidId', 'organizationId');

    // An unknown organization, or one of another tenant, is refused and no project is made.
    const t2 = await createTenant();
    const foreign = controlData(await admin.post('/api/OrganizationRecord', { slug: newSlug('o'), name: 'F', tenant: t2.id }), 201);
    expectError(await admin.post('/api/projects/create', { tenant: t.id, slug: 'd', name: 'D', organizationId: randomUUID() }), 404, 'NOT_FOUND', 'Organization.NotFound');
    expectError(await admin.post('/api/projects/create', { tenant: t.id, slug: 'd', name: 'D', organizationId: foreign.id }), 404, 'NOT_FOUND', 'Organization.NotFound');
    expectError(await admin.post('/api/projects/create', { tenant: t.id, slug: 'd', name: 'D', organizationId: 'x' }), 422, 'VALIDATION_FAILED', 'Project.InvalidProperty', 'organizationId');
    expectError(await admin.get(`/api/projects/resolve?tenant=${t.id}&project=d`), 404, 'NOT_FOUND', 'Project.NotFound');

    // PUT moves a project between organizations (null: out of any).
    assert.equal(controlData(await admin.put(`/api/ProjectRecord/${b.id}`, { organizationId: other.id }), 200).organizationId, other.id);
    expectError(await admin.put(`/api/ProjectRecord/${b.id}`, { organizationId: foreign.id }), 404, 'NOT_FOUND', 'Organization.NotFound');
    assert.deepEqual((controlData(await admin.get(`/api/ProjectRecord/ByOrganization/${other.id}`), 200) as any[]).map((p) => p.id), [b.id]);
    assert.deepEqual((controlData(await admin.get(`/api/ProjectRecord/ByOrganization/${org.id}`), 200) as any[]).map((p) => p.id), [a.id]);
    assert.equal(controlData(await admin.put(`/api/ProjectRecord/${b.id}`, { organizationId: null }), 200).organizationId, null);

    // An organization with projects cannot be deleted.
    expectError(await admin.delete(`/api/OrganizationRecord/${org.id}`), 409, 'CONFLICT', 'Organization.HasProjects');
    expectStatus(await admin.delete(`/api/ProjectRecord/${a.id}`), 204);
    expectStatus(await admin.delete(`/api/OrganizationRecord/${org.id}`), 204);

    // A project with surfaces, announcements and upgrade plans deletes with them; an empty tenant with organizations too.
    const scoped = admin.with({ tenant: t.slug, project: 'c' });
    controlData(await scoped.post('/api/Surface', { name: 's', kind: 'AdminSurface', version: '1.0.0' }), 201);
    controlData(await admin.post(`/api/version/projects/${c.id}/foundation/adopt`, { profileName: 'standard', foundationVersion: '1.0.0' }), 200);
    controlData(await admin.post(`/api/version/projects/${c.id}/upgrade/plan`, { targetVersion: '1.1.0' }), 201);
    await defineEntity(scoped, { entityName: 'Thing', fields: [{ name: 'n', type: 'Int', nullable: true }] });
    controlData(await scoped.post('/api/version/deprecations/announce', { bindingId: 'rest:Entity.Thing.List', replacement: '/x' }), 200);
    for (const id of [b.id, c.id]) expectStatus(await admin.delete(`/api/ProjectRecord/${id}`), 204);
    expectStatus(await admin.delete(`/api/TenantRecord/${t.id}`), 204);
    expectError(await admin.get(`/api/OrganizationRecord/${other.id}`), 404, 'NOT_FOUND', 'Organization.NotFound');
  });

  it('root-project/current answers the topmost ancestor, or the project itself', async () => {
    const t = await createTenant();
    const root = controlData(await admin.post('/api/projects/create', { tenant: t.id, slug: 'root', name: 'Root' }), 201);
    const mid = controlData(await admin.post(`/api/projects/${root.id}/children`, { slug: 'mid', name: 'Mid' }), 201);
    const leaf = controlData(await admin.post(`/api/projects/${mid.id}/children`, { slug: 'leaf', name: 'Leaf' }), 201);
    for (const slug of ['root', 'mid', 'leaf']) {
      const got = controlData(await admin.with({ tenant: t.slug, project: slug }).get('/api/root-project/current'), 200, 'ProjectRecord');
      assert.deepEqual(got, root, slug);
    }
    assert.equal(leaf.parentProjectId, mid.id);
    expectError(await admin.get('/api/root-project/current'), 422, 'VALIDATION_FAILED', 'Scope.TenantHeaderMissing');
    expectError(await admin.with({ tenant: t.slug, project: 'nope' }).get('/api/root-project/current'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
  });

  it('adopt-template copies the template model into an empty project, all or nothing', async () => {
    const tpl = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(tpl.client, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }, { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'], default: 'free' }] });
    await defineEntity(tpl.client, { entityName: 'Account', fields: [{ name: 'owner', type: 'ID', nullable: false, references: 'Customer' }], softDelete: true });
    const target = await bootstrapProject(server.url, server.adminToken);
    const done = controlData(await admin.post(`/api/ProjectRecord/${target.projectId}/adopt-template`, { templateProjectId: tpl.projectId }), 200, 'ProjectRecord', 'templateAdopted');
    assert.deepEqual(done.entities, ['Customer', 'Account']);
    assert.equal(done.publicationVersion, 2);
    const meta = controlData(await target.client.get('/api/Schema/entities/metadata'), 200);
    const tplMeta = controlData(await tpl.client.get('/api/Schema/entities/metadata'), 200);
    const defs = (m: any): unknown => (m.entities ?? m).map((e: any) => e.definition);
    assert.deepEqual(defs(meta), defs(tplMeta));
    // The adopted entity serves rows.
    expectStatus(await target.client.post('/api/customers', { email: 'a@b.c' }), 201);

    // A non-empty target is refused, and so are bad ids; nothing changes.
    expectError(await admin.post(`/api/ProjectRecord/${target.projectId}/adopt-template`, { templateProjectId: tpl.projectId }), 409, 'CONFLICT', 'Project.NotEmpty');
    const empty = await bootstrapProject(server.url, server.adminToken);
    expectError(await admin.post(`/api/ProjectRecord/${empty.projectId}/adopt-template`, { templateProjectId: randomUUID() }), 404, 'NOT_FOUND', 'Project.TemplateNotFound');
    expectError(await admin.post(`/api/ProjectRecord/${empty.projectId}/adopt-template`, { templateProjectId: 'x' }), 422, 'VALIDATION_FAILED', 'Project.InvalidId', 'templateProjectId');
    expectError(await admin.post(`/api/ProjectRecord/${empty.projectId}/adopt-template`, {}), 422, 'VALIDATION_FAILED', 'Project.MissingProperty', 'templateProjectId');
    expectError(await admin.post(`/api/ProjectRecord/${randomUUID()}/adopt-template`, { templateProjectId: tpl.projectId }), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.post('/api/ProjectRecord/x/adopt-template', { templateProjectId: tpl.projectId }), 422, 'VALIDATION_FAILED', 'Project.InvalidId', 'id');
    expectError(await admin.post(`/api/ProjectRecord/${tpl.projectId}/adopt-template`, { templateProjectId: tpl.projectId }), 409, 'CONFLICT', 'Project.TemplateIsTarget');
    assert.deepEqual(defs(controlData(await empty.client.get('/api/Schema/entities/metadata'), 200)), []);
  });

  it('a project user gets 403 on every mutating records route', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    const user = admin.with({ token: await projectUserToken(p.client), tenant: p.tenant, project: p.project });
    const org = controlData(await admin.post('/api/OrganizationRecord', { slug: newSlug('o'), name: 'O', tenant: p.tenantId }), 201);
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/api/OrganizationRecord', { slug: newSlug('o'), name: 'x', tenant: p.tenantId }],
      ['PUT', `/api/OrganizationRecord/${org.id}`, { name: 'y' }],
      ['DELETE', `/api/OrganizationRecord/${org.id}`],
      ['POST', '/api/ProjectRecord', { tenant: p.tenantId, slug: 'z', name: 'z', organizationId: org.id }],
      ['POST', '/api/projects/create', { tenant: p.tenantId, slug: 'z', name: 'z', organizationId: org.id }],
      ['PUT', `/api/ProjectRecord/${p.projectId}`, { organizationId: org.id }],
      ['POST', `/api/ProjectRecord/${p.projectId}/adopt-template`, { templateProjectId: p.projectId }],
    ];
    for (const [method, path, body] of calls) {
      expectError(await user.request(method, path, body), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    }
    assert.equal(controlData(await admin.get(`/api/OrganizationRecord/${org.id}`), 200).name, 'O');
    assert.equal(controlData(await admin.get(`/api/ProjectRecord/${p.projectId}`), 200).organizationId, null);
  });
});
