/**
 * Project hierarchy and governance envelopes over HTTP (CONTRACT: Project
 * hierarchy and governance, Step-up): a parent's envelope reaches its
 * children from the next request, grant creation and grant use past it are
 * refused, step-up is asked for, page sizes are capped, and a suspended
 * project refuses its data plane.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, defineEntity, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const slug = (prefix = 'g'): string => `${prefix}${randomUUID().slice(0, 8)}`;

interface Family { tenant: string; parentId: string; childId: string; child: Client }

forEachBackend('governance envelopes', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  /** A tenant with a parent project and one child, and an admin client scoped to the child. */
  async function family(): Promise<Family> {
    const tenant = slug('t');
    expectStatus(await admin.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const parent = await admin.post('/api/projects/create', { tenant, slug: 'parent', name: 'Parent' });
    expectStatus(parent, 201);
    const child = await admin.post(`/api/projects/${parent.body.data.id}/children`, { slug: 'child', name: 'Child' });
    expectStatus(child, 201);
    return { tenant, parentId: parent.body.data.id, childId: child.body.data.id, child: admin.with({ tenant, project: 'child' }) };
  }

  /** Registers and logs in a user of the project `scoped` points at. */
  async function user(scoped: Client): Promise<{ client: Client; subjectId: string }> {
    const anonymous = scoped.with({ token: null });
    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    const reg = await anonymous.post('/api/identity/register', { email, password: 'correct horse 42' });
    expectStatus(reg, 201);
    const login = await anonymous.post('/api/identity/login', { email, password: 'correct horse 42' });
    expectStatus(login, 200);
    return { client: scoped.with({ token: login.body.accessToken }), subjectId: reg.body.data.subjectId };
  }

  async function apiKey(f: Family, grants: unknown[]): Promise<Client> {
    const r = await admin.post(`/api/projects/${f.childId}/api-keys`, { name: 'k', grants });
    expectStatus(r, 201);
    const shown = await admin.post(`/api/CredentialReveal/${r.body.data.revealTokenId}/reveal`);
    expectStatus(shown, 200);
    return f.child.with({ token: shown.body.data.secret });
  }

  const grant = (projectId: string, body: Json): Promise<Reply> => admin.post(`/api/projects/${projectId}/capability-grants`, body);
  const putPolicy = (projectId: string, envelope: unknown, as = admin): Promise<Reply> => as.put(`/api/projects/${projectId}/governance/inheritance-policy`, { envelope });

  it('a parent envelope reaches the child: creation and use past it are refused, step-up is asked for', async () => {
    const f = await family();
    await defineEntity(f.child, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    await defineEntity(f.child, { entityName: 'Payment', fields: [{ name: 'amount', type: 'Int', nullable: false }] });
    const u = await user(f.child);
    for (const g of ['entity:Doc:read', 'entity:Doc:delete', 'entity:Payment:read']) expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: g }), 201);
    const docs = [];
    for (const title of ['a', 'b', 'c']) docs.push((await f.child.post('/api/docs', { title })).body.data.id as string);
    expectStatus(await f.child.post('/api/payments', { amount: 5 }), 201);
    const readKey = await apiKey(f, ['entity:Payment:read', 'entity:Doc:read']);
    // Before any envelope: the user deletes with its grant, reads payments with a password session.
    expectStatus(await u.client.delete(`/api/docs/${docs[0]}`), 204);
    expectStatus(await u.client.get('/api/payments'), 200);
    expectStatus(await readKey.get('/api/payments'), 200);

    const envelope = { deniedGrants: ['entity:*:delete'], requireStrength: { 'entity:Payment:*': 'mfa-totp' } };
    const put = await putPolicy(f.parentId, envelope);
    expectStatus(put, 200);
    assert.deepEqual(put.body.data, { projectId: f.parentId, envelope });
    assert.deepEqual((await admin.get(`/api/projects/${f.parentId}/governance/inheritance-policy`)).body.data, { projectId: f.parentId, envelope });
    assert.deepEqual((await admin.get(`/api/projects/${f.childId}/governance/inheritance-policy`)).body.data, { projectId: f.childId, envelope: {} });

    const shown = await admin.get(`/api/projects/${f.childId}/governance/envelope`);
    expectStatus(shown, 200);
    assert.deepEqual(shown.body.data, { effective: envelope, chain: [{ projectId: f.parentId, envelope }] });

    // Creation past the envelope: 422, nothing written; what stays inside is created.
    for (const g of ['entity:Doc:delete', 'entity:Doc:*', 'entity:*:*']) {
      expectError(await grant(f.childId, { subjectId: u.subjectId, grant: g }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded', 'grant');
    }
    expectError(await grant(f.childId, { role: 'authenticated', grant: 'entity:Payment:delete' }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded');
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:Doc:update' }), 201);
    const keyRefused = await admin.post(`/api/projects/${f.childId}/api-keys`, { name: 'k2', grants: ['entity:Doc:read', { grant: 'entity:Doc:delete' }] });
    expectError(keyRefused, 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded', 'grants[1]');
    const grants = (await admin.get(`/api/projects/${f.childId}/capability-grants`)).body.data as Json[];
    assert.deepEqual(grants.map((g) => g.grant).sort(), ['entity:Doc:delete', 'entity:Doc:read', 'entity:Doc:update', 'entity:Payment:read']);

    // Use past the envelope: the pre-existing delete grant no longer works, the read still does.
    expectError(await u.client.delete(`/api/docs/${docs[1]}`), 403, 'ACCESS_DENIED', 'Governance.EnvelopeExceeded');
    assert.equal((await u.client.get('/api/docs')).body.data.length, 2);

    // Step-up: a password session reading a Payment gets a Challenge naming the strength.
    const challenge = expectError(await u.client.get('/api/payments'), 403, 'ACCESS_DENIED', 'Access.StepUpRequired');
    assert.equal(challenge.decision, 'Challenge');
    assert.equal(challenge.requiredStrength, 'mfa-totp');
    const keyChallenge = expectError(await readKey.get('/api/payments'), 403, 'ACCESS_DENIED', 'Access.StepUpRequired');
    assert.equal(keyChallenge.decision, 'Challenge');
    assert.equal(keyChallenge.requiredStrength, 'mfa-totp');
    expectStatus(await readKey.get('/api/docs'), 200);

    // The platform admin is exempt (break-glass).
    expectStatus(await f.child.get('/api/payments'), 200);
    expectStatus(await f.child.delete(`/api/docs/${docs[1]}`), 204);

    // Lifting the parent's envelope lifts it for the child from the next request.
    expectStatus(await putPolicy(f.parentId, {}), 200);
    assert.deepEqual((await admin.get(`/api/projects/${f.childId}/governance/envelope`)).body.data, { effective: {}, chain: [] });
    assert.deepEqual((await admin.get(`/api/projects/${f.parentId}/governance/inheritance-policy`)).body.data, { projectId: f.parentId, envelope: {} });
    expectStatus(await u.client.delete(`/api/docs/${docs[2]}`), 204);
    expectStatus(await u.client.get('/api/payments'), 200);
  });

  it('maxPageSize caps lists and relation lists; the smallest in the chain wins', async () => {
    const f = await family();
    await defineEntity(f.child, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    await defineEntity(f.child, { entityName: 'Comment', fields: [{ name: 'doc', type: 'ID', nullable: false, references: 'Doc' }] });
    const doc = (await f.child.post('/api/docs', { title: 'x' })).body.data.id as string;
    for (let i = 0; i < 4; i++) expectStatus(await f.child.post('/api/docs', { title: `d${i}` }), 201);
    for (let i = 0; i < 5; i++) expectStatus(await f.child.post('/api/comments', { doc }), 201);
    const u = await user(f.child);
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:*:read' }), 201);
    assert.equal((await u.client.get('/api/docs')).body.data.length, 5);

    expectStatus(await putPolicy(f.parentId, { maxPageSize: 3 }), 200);
    expectStatus(await putPolicy(f.childId, { maxPageSize: 10 }), 200);
    const shown = (await admin.get(`/api/projects/${f.childId}/governance/envelope`)).body.data;
    assert.deepEqual(shown, { effective: { maxPageSize: 3 }, chain: [{ projectId: f.childId, envelope: { maxPageSize: 10 } }, { projectId: f.parentId, envelope: { maxPageSize: 3 } }] });

    const page = await u.client.get('/api/docs');
    expectStatus(page, 200);
    assert.equal(page.body.data.length, 3);
    assert.equal(page.body.page.size, 3);
    assert.equal(typeof page.body.page.next, 'string');
    assert.equal((await u.client.get('/api/docs?pageSize=2')).body.data.length, 2);
    assert.equal((await u.client.get('/api/docs?pageSize=3')).body.data.length, 3);
    expectError(await u.client.get('/api/docs?pageSize=4'), 422, 'VALIDATION_FAILED', 'Query.PageSizeTooLarge', 'pageSize');
    expectError(await u.client.get(`/api/docs/${doc}/comments?pageSize=4`), 422, 'VALIDATION_FAILED', 'Query.PageSizeTooLarge', 'pageSize');
    assert.equal((await u.client.get(`/api/docs/${doc}/comments`)).body.data.length, 3);
    // The cap is a resource bound: it holds for the admin too.
    expectError(await f.child.get('/api/docs?pageSize=4'), 422, 'VALIDATION_FAILED', 'Query.PageSizeTooLarge', 'pageSize');
    assert.equal((await f.child.get('/api/docs')).body.data.length, 3);
    // The parent alone is capped by its own envelope; a sibling project without a chain is not.
    expectStatus(await putPolicy(f.parentId, { maxPageSize: 1 }), 200);
    assert.equal((await u.client.get('/api/docs')).body.data.length, 1);
  });

  it('allowedGrants intersect down the chain', async () => {
    const f = await family();
    await defineEntity(f.child, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    await defineEntity(f.child, { entityName: 'Payment', fields: [{ name: 'amount', type: 'Int', nullable: false }] });
    const u = await user(f.child);
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:Doc:insert' }), 201);
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:Doc:read' }), 201);
    expectStatus(await u.client.post('/api/docs', { title: 'before' }), 201);

    expectStatus(await putPolicy(f.parentId, { allowedGrants: ['entity:Doc:*', 'entity:Payment:read'] }), 200);
    expectStatus(await putPolicy(f.childId, { allowedGrants: ['entity:Doc:read', 'entity:Payment:*'] }), 200);
    const effective = (await admin.get(`/api/projects/${f.childId}/governance/envelope`)).body.data.effective;
    assert.deepEqual(new Set(effective.allowedGrants), new Set(['entity:Doc:read', 'entity:Payment:read']));
    assert.deepEqual(Object.keys(effective), ['allowedGrants']);
    // The parent alone allows Doc:insert; the child's narrower list does not.
    assert.deepEqual((await admin.get(`/api/projects/${f.parentId}/governance/envelope`)).body.data.effective, { allowedGrants: ['entity:Doc:*', 'entity:Payment:read'] });

    for (const g of ['entity:Doc:update', 'entity:Doc:*', 'entity:Payment:insert', 'entity:*:read', 'entity:Note:read']) {
      expectError(await grant(f.childId, { subjectId: u.subjectId, grant: g }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded', 'grant');
    }
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:Payment:read' }), 201);
    expectError(await u.client.post('/api/docs', { title: 'after' }), 403, 'ACCESS_DENIED', 'Governance.EnvelopeExceeded');
    expectStatus(await u.client.get('/api/docs'), 200);
    expectStatus(await u.client.get('/api/payments'), 200);
  });

  it('refuses bad envelopes with 422 and stores nothing; users get 403; unknown projects 404', async () => {
    const f = await family();
    expectStatus(await putPolicy(f.childId, { maxPageSize: 7 }), 200);
    const bad: Array<[unknown, string]> = [
      [{ deniedGrants: ['entity:doc:read'] }, 'Governance.InvalidPattern'],
      [{ allowedGrants: ['entity:Doc:write'] }, 'Governance.InvalidPattern'],
      [{ deniedGrants: 'entity:*:*' }, 'Governance.InvalidEnvelope'],
      [{ requireStrength: { 'entity:Doc:read': 'password' } }, 'Governance.InvalidStrength'],
      [{ requireStrength: { 'entity:Doc:*': 'sms' } }, 'Governance.InvalidStrength'],
      [{ requireStrength: { 'doc:*': 'mfa-totp' } }, 'Governance.InvalidPattern'],
      [{ maxPageSize: 0 }, 'Governance.InvalidMaxPageSize'],
      [{ maxPageSize: 2.5 }, 'Governance.InvalidMaxPageSize'],
      [{ maxPageSize: '5' }, 'Governance.InvalidMaxPageSize'],
      [{ colour: 'red' }, 'Governance.UnknownProperty'],
      [[], 'Governance.InvalidEnvelope'],
    ];
    for (const [envelope, reason] of bad) expectError(await putPolicy(f.childId, envelope), 422, 'VALIDATION_FAILED', reason);
    expectError(await admin.put(`/api/projects/${f.childId}/governance/inheritance-policy`, {}), 422, 'VALIDATION_FAILED', 'Governance.MissingProperty', 'envelope');
    expectError(await admin.put(`/api/projects/${f.childId}/governance/inheritance-policy`, '{"envelope":'), 422, 'VALIDATION_FAILED', 'Request.MalformedJson');
    assert.deepEqual((await admin.get(`/api/projects/${f.childId}/governance/envelope`)).body.data.effective, { maxPageSize: 7 });

    const u = await user(f.child);
    expectError(await putPolicy(f.childId, {}, u.client), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await putPolicy(f.parentId, { deniedGrants: [] }, u.client), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await u.client.get(`/api/projects/${f.childId}/governance/envelope`), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await u.client.get(`/api/projects/${f.childId}/governance/inheritance-policy`), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await u.client.post(`/api/projects/${f.childId}/children`, { slug: 'x', name: 'x' }), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await u.client.post(`/api/projects/${f.childId}/suspend`), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await new Client(server.url).put(`/api/projects/${f.childId}/governance/inheritance-policy`, { envelope: {} }), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    expectError(await putPolicy(randomUUID(), {}), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get(`/api/projects/${randomUUID()}/governance/envelope`), 404, 'NOT_FOUND', 'Project.NotFound');
    expectError(await admin.get('/api/projects/not-a-uuid/governance/envelope'), 404, 'NOT_FOUND', 'Project.NotFound');
  });

  it('hierarchy reads answer { data: [ { id, slug, parentProjectId } ] }, ancestors nearest first', async () => {
    const f = await family();
    const grand = await admin.post(`/api/projects/${f.childId}/children`, { slug: 'grand', name: 'Grand' });
    expectStatus(grand, 201);
    assert.equal(grand.body.data.parentProjectId, f.childId);
    assert.equal(grand.body.data.slug, 'grand');
    const ancestors = (await admin.get(`/api/projects/${grand.body.data.id}/ancestors`)).body.data as Json[];
    assert.deepEqual(ancestors.map((p) => [p.id, p.slug, p.parentProjectId]), [[f.childId, 'child', f.parentId], [f.parentId, 'parent', null]]);
    const descendants = (await admin.get(`/api/projects/${f.parentId}/descendants`)).body.data as Json[];
    assert.deepEqual(descendants.map((p) => p.id), [f.childId, grand.body.data.id]);
    assert.deepEqual(((await admin.get(`/api/projects/${f.parentId}/children`)).body.data as Json[]).map((p) => p.slug), ['child']);
    // A grandparent's envelope reaches the grandchild through the chain.
    expectStatus(await putPolicy(f.parentId, { deniedGrants: ['entity:*:delete'] }), 200);
    const shown = (await admin.get(`/api/projects/${grand.body.data.id}/governance/envelope`)).body.data;
    assert.deepEqual(shown, { effective: { deniedGrants: ['entity:*:delete'] }, chain: [{ projectId: f.parentId, envelope: { deniedGrants: ['entity:*:delete'] } }] });
  });

  it('a suspended project answers 403 Project.Suspended on the data plane; the admin keeps the control plane; resume restores', async () => {
    const f = await family();
    await defineEntity(f.child, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
    const u = await user(f.child);
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:Doc:read' }), 201);
    const key = await apiKey(f, ['entity:Doc:read']);
    expectStatus(await u.client.get('/api/docs'), 200);

    expectStatus(await admin.post(`/api/projects/${f.childId}/suspend`), 200);
    expectError(await u.client.get('/api/docs'), 403, 'ACCESS_DENIED', 'Project.Suspended');
    expectError(await key.get('/api/docs'), 403, 'ACCESS_DENIED', 'Project.Suspended');
    expectError(await f.child.with({ token: null }).post('/api/identity/register', { email: 'x@example.com', password: 'correct horse 42' }), 403, 'ACCESS_DENIED', 'Project.Suspended');
    // Suspension is the project's own: its parent keeps serving.
    expectStatus(await admin.with({ tenant: f.tenant, project: 'parent' }).get('/api/Schema/entities/metadata'), 200);
    // The control plane stays with the admin.
    expectStatus(await putPolicy(f.childId, { maxPageSize: 5 }), 200);
    expectStatus(await admin.get(`/api/projects/${f.childId}/governance/envelope`), 200);
    expectStatus(await grant(f.childId, { subjectId: u.subjectId, grant: 'entity:Doc:update' }), 201);
    expectStatus(await f.child.get('/api/docs'), 200);

    expectStatus(await admin.post(`/api/projects/${f.childId}/archive`), 200);
    expectError(await u.client.get('/api/docs'), 403, 'ACCESS_DENIED', 'Project.Archived');
    expectStatus(await admin.post(`/api/projects/${f.childId}/resume`), 200);
    expectStatus(await u.client.get('/api/docs'), 200);
    expectStatus(await key.get('/api/docs'), 200);
  });
});
