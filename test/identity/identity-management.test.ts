/**
 * `/api/IdentityManagement` over the real server: claims carried in tokens
 * issued afterwards, subjects list/read, deactivation (tokens, refresh,
 * realtime and login all refused at once), memberships; and, when NATS and
 * PostgreSQL are at hand, deactivation through one node refused at once on
 * another.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { compileErrors, validate } from '@readme/openapi-parser';
import { STATIC_ROUTES } from '../../adapters/rest/routes.js';
import { EMPTY_MODEL } from '../../runtime/publication/model.js';
import { buildOpenApiDocument } from '../../runtime/publication/openapi.js';
import { declaredOpenApi } from '../../runtime/operations/contract/index.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';
import { bootstrapProject, Client } from '../support/client.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase, forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { SESSION_REVOKED_CLOSE_CODE } from '../../runtime/realtime/session-connections.js';
import { servicesSkip } from '../support/services.js';

const PASSWORD = 'long enough pw';
const IM = '/api/IdentityManagement';

interface User { email: string; subjectId: string; token: string; refreshToken: string; sessionId: string; anon: Client }

async function register(admin: Client): Promise<{ email: string; subjectId: string; anon: Client }> {
  const anon = admin.with({ token: null });
  const email = `${randomUUID().slice(0, 12)}@example.com`;
  const reg = await anon.post('/api/identity/register', { email, password: PASSWORD });
  expectStatus(reg, 201);
  return { email, subjectId: reg.body.data.subjectId, anon };
}

async function login(anon: Client, email: string): Promise<{ token: string; refreshToken: string; sessionId: string }> {
  const r = await anon.post('/api/identity/login', { email, password: PASSWORD });
  expectStatus(r, 200);
  return { token: r.body.accessToken, refreshToken: r.body.refreshToken, sessionId: r.body.sessionId };
}

async function user(admin: Client): Promise<User> {
  const u = await register(admin);
  return { ...u, ...(await login(u.anon, u.email)) };
}

/** The JWT's payload, decoded without verification (what a client would see). */
const payloadOf = (jwt: string): Json => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Json;

forEachBackend('identity management', (backend: Backend) => {
  let server: TestServer;
  before(async () => { server = await startServer({ backend }); });
  after(async () => { await server?.close(); });

  const project = () => bootstrapProject(server.url, server.adminToken, `im${randomUUID().slice(0, 8)}`);

  it('claims set by the admin are carried by tokens issued afterwards (login and refresh), not by earlier ones', async () => {
    const p = await project();
    const u = await user(p.client);
    assert.equal(payloadOf(u.token).claims, undefined, 'no claims yet');

    const put = await p.client.put(`${IM}/subjects/${u.subjectId}/claims`, { claims: { tenantId: 'acme', tier: 'gold' } });
    expectStatus(put, 200);
    assert.deepEqual(put.body.data, { subjectId: u.subjectId, claims: { tenantId: 'acme', tier: 'gold' } });

    // The earlier token still works and still carries nothing.
    assert.equal(payloadOf(u.token).claims, undefined);
    expectStatus(await u.anon.with({ token: u.token }).get('/api/identity/me'), 200);

    const again = await login(u.anon, u.email);
    assert.deepEqual(payloadOf(again.token).claims, { tenantId: 'acme', tier: 'gold' });
    expectStatus(await u.anon.with({ token: again.token }).get('/api/identity/me'), 200);
    // Refresh of the old session picks up the current claims too.
    const refreshed = await u.anon.post('/api/identity/tokens/refresh', { refreshToken: u.refreshToken });
    expectStatus(refreshed, 200);
    assert.deepEqual(payloadOf(refreshed.body.accessToken).claims, { tenantId: 'acme', tier: 'gold' });

    // The subject record shows them; `{}` clears them for the next token.
    const read = await p.client.get(`${IM}/subjects/${u.subjectId}`);
    expectStatus(read, 200);
    assert.deepEqual(read.body.data.claims, { tenantId: 'acme', tier: 'gold' });
    expectStatus(await p.client.put(`${IM}/subjects/${u.subjectId}/claims`, { claims: {} }), 200);
    assert.equal(payloadOf((await login(u.anon, u.email)).token).claims, undefined);
  });

  it('refuses bad claims with 422 naming the field, and unknown subjects with 404', async () => {
    const p = await project();
    const u = await register(p.client);
    const put = (body: unknown) => p.client.put(`${IM}/subjects/${u.subjectId}/claims`, body);
    expectError(await put({ claims: { tier: 3 } }), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaimValue', 'claims.tier');
    expectError(await put({ claims: { tier: null } }), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaimValue', 'claims.tier');
    expectError(await put({ claims: { 'a.b': 'x' } }), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaimName', 'claims.a.b');
    expectError(await put({ claims: { __proto__x: 'x' } }), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaimName', 'claims.__proto__x');
    expectError(await put({ claims: { long: 'x'.repeat(257) } }), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaimValue', 'claims.long');
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`c${i}`, 'v']));
    expectError(await put({ claims: many }), 422, 'VALIDATION_FAILED', 'Identity.TooManyClaims', 'claims');
    const big = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`c${i}`, 'v'.repeat(256)]));
    expectError(await put({ claims: big }), 422, 'VALIDATION_FAILED', 'Identity.ClaimsTooLarge', 'claims');
    expectError(await put({ claims: ['x'] }), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaims', 'claims');
    expectError(await put({}), 422, 'VALIDATION_FAILED', 'Identity.InvalidClaims', 'claims');
    expectError(await put({ claims: {}, extra: 1 }), 422, 'VALIDATION_FAILED', 'Identity.UnknownProperty', 'extra');
    expectError(await put('{"claims":'), 422, 'VALIDATION_FAILED', 'Request.MalformedJson');
    // Nothing was stored by the refusals.
    assert.deepEqual((await p.client.get(`${IM}/subjects/${u.subjectId}`)).body.data.claims, {});

    expectError(await p.client.put(`${IM}/subjects/${randomUUID()}/claims`, { claims: {} }), 404, 'NOT_FOUND', 'Identity.SubjectNotFound');
    expectError(await p.client.get(`${IM}/subjects/not-a-uuid`), 404, 'NOT_FOUND', 'Identity.SubjectNotFound');
    // A subject of another project is not found through this project's scope.
    const q = await project();
    expectError(await q.client.get(`${IM}/subjects/${u.subjectId}`), 404, 'NOT_FOUND', 'Identity.SubjectNotFound');
    expectError(await q.client.post(`${IM}/subjects/${u.subjectId}/deactivate`), 404, 'NOT_FOUND', 'Identity.SubjectNotFound');
    // The scope headers are required.
    expectStatus(await p.client.with({ tenant: undefined, project: undefined }).get(`${IM}/subjects`), 422);
  });

  it('answers a project user token with 403 ACCESS_DENIED on every route', async () => {
    const p = await project();
    const u = await user(p.client);
    const asUser = u.anon.with({ token: u.token });
    const denied = (r: Parameters<typeof expectError>[0]) => expectError(r, 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    denied(await asUser.put(`${IM}/subjects/${u.subjectId}/claims`, { claims: { role: 'admin' } }));
    denied(await asUser.get(`${IM}/subjects`));
    denied(await asUser.get(`${IM}/subjects/${u.subjectId}`));
    denied(await asUser.post(`${IM}/subjects/${u.subjectId}/deactivate`));
    denied(await asUser.get(`${IM}/memberships`));
    expectError(await u.anon.get(`${IM}/subjects`), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    assert.deepEqual((await p.client.get(`${IM}/subjects/${u.subjectId}`)).body.data.claims, {});
  });

  it('lists and reads subjects with paging and filters, never with a password hash', async () => {
    const p = await project();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await register(p.client)).subjectId);
    const seen: Json[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 10; n++) {
      const r = await p.client.get(`${IM}/subjects?pageSize=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expectStatus(r, 200);
      assert.ok(r.body.data.length <= 2);
      seen.push(...r.body.data);
      cursor = r.body.page.next;
      if (cursor === undefined) break;
    }
    assert.deepEqual(seen.map((s) => s.subjectId), made, 'every subject once, oldest first');
    for (const s of seen) {
      assert.deepEqual(Object.keys(s).sort(), ['claims', 'createdAt', 'deactivatedAt', 'email', 'state', 'subjectId']);
      assert.equal(s.state, 'active');
    }
    const all = await p.client.get(`${IM}/subjects`);
    assert.ok(!/password|hash|scrypt/i.test(all.text), all.text);

    const one = await p.client.get(`${IM}/subjects/${made[2]}`);
    expectStatus(one, 200);
    assert.equal(one.body.data.subjectId, made[2]);
    assert.ok(!/password|hash|scrypt/i.test(one.text));
    const byEmail = await p.client.get(`${IM}/subjects?email=${encodeURIComponent(one.body.data.email.toUpperCase())}`);
    assert.deepEqual(byEmail.body.data.map((s: Json) => s.subjectId), [made[2]]);

    // A cursor of one filter is refused on another; bad parameters are 422.
    const first = await p.client.get(`${IM}/subjects?pageSize=1`);
    expectError(await p.client.get(`${IM}/subjects?pageSize=1&state=active&cursor=${first.body.page.next}`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    expectError(await p.client.get(`${IM}/subjects?cursor=bm90LWpzb24`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    expectError(await p.client.get(`${IM}/subjects?state=gone`), 422, 'VALIDATION_FAILED', 'Query.InvalidState', 'state');
    expectError(await p.client.get(`${IM}/subjects?pageSize=100000`), 422, 'VALIDATION_FAILED', 'Query.InvalidPageSize', 'pageSize');
  });

  it('deactivation ends the subject\'s access token, refresh, WebSocket and login at once', async () => {
    const p = await project();
    const u = await user(p.client);
    const other = await user(p.client);
    const asUser = u.anon.with({ token: u.token });
    expectStatus(await asUser.get('/api/identity/me'), 200); // the session's state is now cached on the node

    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/realtime`, { headers: { authorization: `Bearer ${u.token}`, 'x-service-tenant': p.tenant, 'x-service-project': p.project } });
    const inbox: Json[] = [];
    ws.on('message', (d) => inbox.push(JSON.parse(d.toString()) as Json));
    const closed = new Promise<{ code: number }>((resolve) => ws.once('close', (code) => resolve({ code })));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    try {
      const d = await p.client.post(`${IM}/subjects/${u.subjectId}/deactivate`);
      expectStatus(d, 200);
      assert.equal(d.body.data.subjectId, u.subjectId);
      assert.equal(d.body.data.state, 'deactivated');
      assert.equal(typeof d.body.data.deactivatedAt, 'string');

      expectError(await asUser.get('/api/identity/me'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
      expectError(await u.anon.post('/api/identity/tokens/refresh', { refreshToken: u.refreshToken }), 401, 'UNAUTHORIZED', 'Identity.InvalidRefreshToken');
      const end = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
      assert.ok(end !== null, 'the WebSocket stayed open after its subject was deactivated');
      assert.equal(end.code, SESSION_REVOKED_CLOSE_CODE);
      assert.equal(inbox.at(-1)?.reasonCode, 'Identity.SessionRevoked');
      // Login with the right password reads like a wrong one.
      expectError(await u.anon.post('/api/identity/login', { email: u.email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'Identity.InvalidCredentials');

      // Idempotent; the other subject is untouched; the record and the list show the state.
      const again = await p.client.post(`${IM}/subjects/${u.subjectId}/deactivate`);
      expectStatus(again, 200);
      assert.equal(again.body.data.deactivatedAt, d.body.data.deactivatedAt);
      expectStatus(await other.anon.with({ token: other.token }).get('/api/identity/me'), 200);
      assert.equal((await p.client.get(`${IM}/subjects/${u.subjectId}`)).body.data.state, 'deactivated');
      const list = await p.client.get(`${IM}/subjects?state=deactivated`);
      assert.deepEqual(list.body.data.map((s: Json) => s.subjectId), [u.subjectId]);
    } finally {
      ws.terminate();
    }
  });

  it('lists memberships: roles and the grants each subject holds, directly or through a role', async () => {
    const p = await project();
    const a = await register(p.client);
    const b = await register(p.client);
    const byRole = await p.client.post(`/api/projects/${p.projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read' });
    expectStatus(byRole, 201);
    const direct = await p.client.post(`/api/projects/${p.projectId}/capability-grants`, { subjectId: a.subjectId, grant: 'entity:Order:update' });
    expectStatus(direct, 201);
    expectStatus(await p.client.post(`${IM}/subjects/${b.subjectId}/deactivate`), 200);

    const r = await p.client.get(`${IM}/memberships`);
    expectStatus(r, 200);
    assert.deepEqual(r.body.data, [
      {
        subjectId: a.subjectId, email: a.email, state: 'active', roles: ['authenticated'],
        grants: [
          { grantId: byRole.body.data.grantId, grant: 'entity:Order:read', via: 'role', role: 'authenticated' },
          { grantId: direct.body.data.grantId, grant: 'entity:Order:update', via: 'subject' },
        ],
      },
      { subjectId: b.subjectId, email: b.email, state: 'deactivated', roles: [], grants: [] },
    ]);
    assert.equal(r.body.page.next, undefined);
    const one = await p.client.get(`${IM}/memberships?subjectId=${b.subjectId}`);
    assert.deepEqual(one.body.data.map((m: Json) => m.subjectId), [b.subjectId]);
    expectError(await p.client.get(`${IM}/memberships?subjectId=x`), 422, 'VALIDATION_FAILED', 'Query.InvalidSubjectId', 'subjectId');
  });
});


describe('identity management in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: PlinthProcess;
  let b: PlinthProcess;
  const token = `im-cluster-admin-${randomUUID()}`;

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    [a, b] = await Promise.all(['im-a', 'im-b'].map((nodeId) => startPlinthProcess({ databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId })));
  });
  after(async () => {
    await reapPlinthProcesses();
    await nats?.stop();
    await db?.drop();
  });

  it('a subject deactivated through node A is refused on node B at once, well inside the 3 s status cache', async () => {
    const p = await bootstrapProject(a.url, token, `imc${randomUUID().slice(0, 6)}`);
    const u = await user(p.client);
    const onB = new Client(b.url, { token: u.token, tenant: p.tenant, project: p.project });
    // Node B has the session cached as live from here on (3 s). `sessions` (not `me`, which reads the
    // subject's state itself) answers from the token check alone.
    expectStatus(await onB.get('/api/identity/sessions'), 200);
    const started = Date.now();
    expectStatus(await p.client.post(`${IM}/subjects/${u.subjectId}/deactivate`), 200);
    // The bus announcement travels asynchronously: allow it a moment, far less than the cache bound.
    let reply = await onB.get('/api/identity/sessions');
    while (reply.status === 200 && Date.now() - started < 2_500) {
      await new Promise((r) => setTimeout(r, 25));
      reply = await onB.get('/api/identity/sessions');
    }
    const elapsed = Date.now() - started;
    expectError(reply, 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    assert.ok(elapsed < 1_500, `node B refused only after ${elapsed} ms (the cache bound, not the bus)`);
  });
});

describe('identity management in the OpenAPI document', () => {
  const doc = buildOpenApiDocument({ model: EMPTY_MODEL, publicationVersion: 1, tenantSlug: 'acme', projectSlug: 'shop', basePath: '/api', platform: declaredOpenApi(PLATFORM_OPERATIONS) }) as Json;

  it('documents every /IdentityManagement route with its operation id, admin-only, and still validates', async () => {
    const routes = STATIC_ROUTES.filter((r) => r.path.startsWith('IdentityManagement/'));
    assert.equal(routes.length, 5);
    for (const r of routes) {
      const path = `/${r.path.replace(/:(\w+)/g, '{$1}')}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      assert.ok(op, `${r.method} ${path} is documented`);
      assert.equal(op.operationId, r.spec.id);
      assert.equal(r.spec.authn, 'admin');
      assert.deepEqual(op.security, [{ adminToken: [], tenantHeader: [], projectHeader: [] }]);
      assert.ok(op.responses['403'], `${path} documents 403`);
    }
    const subject = doc.components.schemas.IdentitySubject;
    assert.ok(!Object.keys(subject.properties).some((k) => /password|hash/i.test(k)));
    const result = await validate(JSON.parse(JSON.stringify(doc)));
    assert.equal(result.valid, true, result.valid ? '' : compileErrors(result));
  });
});
