/**
 * Identity end to end: the real server over HTTP (bootstrap per CONTRACT,
 * then register / login / refresh / sessions / grants).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { forEachBackend, startServer, type Backend } from '../support/server.js';

type Json = Record<string, any>;
interface Reply { status: number; body: Json; headers: Headers }

forEachBackend('identity over HTTP', (backend: Backend) => {
  let server: Awaited<ReturnType<typeof startServer>>;
  const tenantSlug = `t${randomUUID().slice(0, 8)}`;
  let projectA: Json;
  let projectB: Json;

  async function req(method: string, path: string, opts: { bearer?: string | null; project?: Json | null; body?: unknown } = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    const bearer = opts.bearer === undefined ? server.adminToken : opts.bearer;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    if (opts.project) {
      headers['x-service-tenant'] = tenantSlug;
      headers['x-service-project'] = opts.project.slug;
    }
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? {} : JSON.parse(text), headers: res.headers };
  }

  const expectStatus = (r: Reply, status: number, what: string) => assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);

  function expectError(r: Reply, status: number, code: string, reasonCode?: string) {
    expectStatus(r, status, `${code}/${reasonCode ?? ''}`);
    assert.equal(r.body.error?.code, code);
    if (reasonCode !== undefined) assert.equal(r.body.error.reasonCode, reasonCode);
    assert.equal(typeof r.body.error.reasonCode, 'string');
    assert.match(r.body.error.reasonCode, /^[A-Za-z]+\.[A-Za-z.]+$/);
    assert.equal(typeof r.body.error.correlationId, 'string');
    assert.ok(r.body.error.correlationId.length > 0);
  }

  async function createProject(slug: string): Promise<Json> {
    const r = await req('POST', '/api/projects/create', { body: { tenant: tenantSlug, slug, name: slug } });
    expectStatus(r, 201, 'project');
    const data = r.body.data;
    return { id: data.id ?? data.projectId, slug };
  }

  before(async () => {
    server = await startServer({ backend });
    expectStatus(await req('POST', '/api/TenantRecord', { body: { slug: tenantSlug, name: 'Identity Test' } }), 201, 'tenant');
    projectA = await createProject('shop');
    projectB = await createProject('other');
    for (const p of [projectA, projectB]) {
      const r = await req('POST', '/api/Schema/entities', { project: p, body: { entityName: 'Order', fields: [{ name: 'total', type: 'Decimal', nullable: false }] } });
      expectStatus(r, 201, 'schema');
    }
  });
  after(async () => { await server?.close(); });

  const newEmail = () => `User.${randomUUID().slice(0, 8)}@Example.com`;
  const PASSWORD = 'correct horse 42';

  async function registerAndLogin(project = projectA) {
    const email = newEmail();
    const reg = await req('POST', '/api/identity/register', { bearer: null, project, body: { email, password: PASSWORD } });
    expectStatus(reg, 201, 'register');
    assert.equal(reg.body.data.email, email.toLowerCase());
    const login = await req('POST', '/api/identity/login', { bearer: null, project, body: { email, password: PASSWORD } });
    expectStatus(login, 200, 'login');
    return { email: email.toLowerCase(), subjectId: reg.body.data.subjectId as string, ...(login.body as { accessToken: string; refreshToken: string; expiresAt: string; sessionId: string }) };
  }

  it('login and refresh answer the token pair at the top level (CONTRACT: Identity)', async () => {
    const email = newEmail();
    expectStatus(await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email, password: PASSWORD } }), 201, 'register');
    const login = await req('POST', '/api/identity/login', { bearer: null, project: projectA, body: { email, password: PASSWORD } });
    expectStatus(login, 200, 'login');
    const keys = ['accessToken', 'expiresAt', 'refreshToken', 'sessionId'];
    assert.deepEqual(Object.keys(login.body).sort(), keys);
    const refreshed = await req('POST', '/api/identity/tokens/refresh', { bearer: null, project: projectA, body: { refreshToken: login.body.refreshToken } });
    expectStatus(refreshed, 200, 'refresh');
    assert.deepEqual(Object.keys(refreshed.body).sort(), keys);
    assert.equal(refreshed.body.sessionId, login.body.sessionId);
  });

  it('register → login → me', async () => {
    const u = await registerAndLogin();
    assert.match(u.subjectId, /^[0-9a-f-]{36}$/);
    assert.equal(u.accessToken.split('.').length, 3);
    assert.ok(u.refreshToken.startsWith(`${u.sessionId}.`));
    assert.ok(Date.parse(u.expiresAt) > Date.now());
    const me = await req('GET', '/api/identity/me', { bearer: u.accessToken, project: projectA });
    expectStatus(me, 200, 'me');
    assert.equal(me.body.data.subjectId, u.subjectId);
    assert.equal(me.body.data.email, u.email);
    assert.equal(me.body.data.projectId, projectA.id);
    assert.equal(me.body.data.sessionId, u.sessionId);
    assert.deepEqual(me.body.data.roles, ['authenticated']);
  });

  it('wrong password and unknown email: 401 with the error envelope', async () => {
    const u = await registerAndLogin();
    for (const body of [{ email: u.email, password: 'not the password' }, { email: newEmail(), password: PASSWORD }]) {
      const r = await req('POST', '/api/identity/login', { bearer: null, project: projectA, body });
      expectError(r, 401, 'UNAUTHORIZED', 'Identity.InvalidCredentials');
      assert.ok(r.headers.get('x-service-correlation-id'));
    }
  });

  it('registering a taken address answers like a new one and creates nothing; bad input → 422', async () => {
    const email = newEmail();
    const first = await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email, password: PASSWORD } });
    expectStatus(first, 201, 'first');
    const again = await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email: email.toUpperCase(), password: 'another password 1' } });
    expectStatus(again, 201, 'taken address');
    assert.deepEqual(Object.keys(again.body.data).sort(), ['email', 'subjectId']);
    assert.equal(again.body.data.email, email.toLowerCase());
    assert.match(again.body.data.subjectId, /^[0-9a-f-]{36}$/);
    assert.notEqual(again.body.data.subjectId, first.body.data.subjectId);
    // nothing changed: the first password still logs in, the second does not
    expectStatus(await req('POST', '/api/identity/login', { bearer: null, project: projectA, body: { email, password: PASSWORD } }), 200, 'first password');
    expectError(await req('POST', '/api/identity/login', { bearer: null, project: projectA, body: { email, password: 'another password 1' } }), 401, 'UNAUTHORIZED', 'Identity.InvalidCredentials');
    // a project may opt into the explicit answer
    expectStatus(await req('PUT', `/api/ProjectRecord/${projectB.id}`, { body: { settings: { identity: { revealTakenEmail: true } } } }), 200, 'settings');
    expectStatus(await req('POST', '/api/identity/register', { bearer: null, project: projectB, body: { email, password: PASSWORD } }), 201, 'first in B');
    expectError(await req('POST', '/api/identity/register', { bearer: null, project: projectB, body: { email, password: PASSWORD } }), 409, 'CONFLICT', 'Identity.EmailTaken');
    expectError(await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email: 'nope', password: PASSWORD } }), 422, 'VALIDATION_FAILED', 'Identity.InvalidEmail');
    expectError(await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email: newEmail(), password: 'short' } }), 422, 'VALIDATION_FAILED', 'Identity.WeakPassword');
    expectError(await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email: newEmail(), password: PASSWORD, role: 'admin' } }), 422, 'VALIDATION_FAILED');
  });

  it('refresh rotates; the old refresh token then fails and the session is revoked', async () => {
    const u = await registerAndLogin();
    const r1 = await req('POST', '/api/identity/tokens/refresh', { bearer: null, project: projectA, body: { refreshToken: u.refreshToken } });
    expectStatus(r1, 200, 'refresh');
    assert.notEqual(r1.body.refreshToken, u.refreshToken);
    assert.equal(r1.body.sessionId, u.sessionId);
    expectStatus(await req('GET', '/api/identity/me', { bearer: r1.body.accessToken, project: projectA }), 200, 'me after refresh');
    // the alias route works too
    const r2 = await req('POST', '/api/identity/refresh', { bearer: null, project: projectA, body: { refreshToken: r1.body.refreshToken } });
    expectStatus(r2, 200, 'refresh alias');

    const reuse = await req('POST', '/api/identity/tokens/refresh', { bearer: null, project: projectA, body: { refreshToken: u.refreshToken } });
    expectError(reuse, 401, 'UNAUTHORIZED', 'Identity.InvalidRefreshToken');
    // theft detection ended the session: the newest refresh token fails too
    expectError(await req('POST', '/api/identity/tokens/refresh', { bearer: null, project: projectA, body: { refreshToken: r2.body.refreshToken } }), 401, 'UNAUTHORIZED', 'Identity.InvalidRefreshToken');
  });

  it('sessions: list and revoke; a revoked session cannot refresh', async () => {
    const u = await registerAndLogin();
    const second = await req('POST', '/api/identity/login', { bearer: null, project: projectA, body: { email: u.email, password: PASSWORD } });
    expectStatus(second, 200, 'second login');
    const list = await req('GET', '/api/identity/sessions', { bearer: u.accessToken, project: projectA });
    expectStatus(list, 200, 'sessions');
    assert.equal(list.body.data.length, 2);
    assert.deepEqual(list.body.data.filter((s: Json) => s.current).map((s: Json) => s.id), [u.sessionId]);

    const other = await registerAndLogin();
    expectError(await req('DELETE', `/api/identity/sessions/${u.sessionId}`, { bearer: other.accessToken, project: projectA }), 404, 'NOT_FOUND', 'Identity.SessionNotFound');

    const revoke = await req('DELETE', `/api/identity/sessions/${second.body.sessionId}`, { bearer: u.accessToken, project: projectA });
    expectStatus(revoke, 204, 'revoke');
    expectError(await req('POST', '/api/identity/tokens/refresh', { bearer: null, project: projectA, body: { refreshToken: second.body.refreshToken } }), 401, 'UNAUTHORIZED', 'Identity.InvalidRefreshToken');
    const after = await req('GET', '/api/identity/sessions', { bearer: u.accessToken, project: projectA });
    assert.ok(after.body.data.find((s: Json) => s.id === second.body.sessionId).revokedAt);
  });

  it('grants: 403 without, 200 after granting the role', async () => {
    const u = await registerAndLogin();
    const denied = await req('GET', '/api/orders', { bearer: u.accessToken, project: projectA });
    expectError(denied, 403, 'ACCESS_DENIED');
    assert.deepEqual(denied.body.error.missingGrants, ['entity:Order:read']);

    const grant = await req('POST', `/api/projects/${projectA.id}/capability-grants`, { body: { role: 'authenticated', grant: 'entity:Order:read' } });
    expectStatus(grant, 201, 'grant');
    assert.equal(typeof grant.body.data.grantId, 'string');
    assert.equal(grant.body.data.grant, 'entity:Order:read');

    expectStatus(await req('GET', '/api/orders', { bearer: u.accessToken, project: projectA }), 200, 'orders after grant');
    // project B grants nothing
    const v = await registerAndLogin(projectB);
    expectError(await req('GET', '/api/orders', { bearer: v.accessToken, project: projectB }), 403, 'ACCESS_DENIED');

    const list = await req('GET', `/api/projects/${projectA.id}/capability-grants`);
    expectStatus(list, 200, 'grant list');
    assert.ok(list.body.data.some((g: Json) => g.grantId === grant.body.data.grantId));
    expectError(await req('POST', `/api/projects/${projectA.id}/capability-grants`, { body: { role: 'authenticated', grant: 'entity:Order:write' } }), 422, 'VALIDATION_FAILED');
    expectError(await req('POST', `/api/projects/${randomUUID()}/capability-grants`, { body: { role: 'authenticated', grant: 'entity:Order:read' } }), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');

    expectStatus(await req('DELETE', `/api/projects/${projectA.id}/capability-grants/${grant.body.data.grantId}`), 204, 'grant delete');
    expectError(await req('GET', '/api/orders', { bearer: u.accessToken, project: projectA }), 403, 'ACCESS_DENIED');
  });

  it('a user token of project A on project B → 401; a tampered token → 401', async () => {
    const u = await registerAndLogin();
    expectError(await req('GET', '/api/identity/me', { bearer: u.accessToken, project: projectB }), 401, 'UNAUTHORIZED');
    expectError(await req('GET', '/api/orders', { bearer: u.accessToken, project: projectB }), 401, 'UNAUTHORIZED');
    const [h, p, s] = u.accessToken.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8'));
    payload.aud = projectB.id;
    const tampered = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expectError(await req('GET', '/api/identity/me', { bearer: tampered, project: projectB }), 401, 'UNAUTHORIZED');
    const sig = Buffer.from(s!, 'base64url');
    sig[5] = sig[5]! ^ 0x40;
    expectError(await req('GET', '/api/identity/me', { bearer: `${h}.${p}.${sig.toString('base64url')}`, project: projectA }), 401, 'UNAUTHORIZED');
  });

  it('a user calling an admin-only route → 403', async () => {
    const u = await registerAndLogin();
    expectError(await req('POST', `/api/projects/${projectA.id}/capability-grants`, { bearer: u.accessToken, body: { role: 'authenticated', grant: 'entity:*:*' } }), 403, 'ACCESS_DENIED');
    expectError(await req('GET', `/api/projects/${projectA.id}/capability-grants`, { bearer: u.accessToken }), 403, 'ACCESS_DENIED');
  });
});
