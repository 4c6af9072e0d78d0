/**
 * The identity operations through the real pipeline (`dispatch`) against an
 * in-memory PGlite, with scope and publication lookups stubbed. The HTTP
 * test (identity.test.ts) covers the same flows through the real server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { PgliteClient, migratePlatform, type SqlClient } from '../../storage/index.js';
import { dispatch, type Outcome } from '../../runtime/dispatch.js';
import { createLogger } from '../../runtime/log.js';
import type { Invocation, OperationSpec, ProjectRow, TenantRow } from '../../runtime/operations/types.js';
import type { Services } from '../../runtime/services.js';
import { JwtTokenVerifier, SqlGrantSource } from '../../runtime/identity/index.js';
import { IDENTITY_SPECS } from '../../runtime/operations/identity/index.js';
import { StreamSlots } from '../../runtime/streams/stream-slots.js';
import { CheckSlots } from '../../runtime/realtime/check-slots.js';

const ADMIN = 'admin-token-for-tests';
let db: SqlClient;
let services: Services;
const tenant: TenantRow = { id: randomUUID(), slug: 'acme', name: 'Acme', state: 'active', createdAt: '', updatedAt: '' };
const mkProject = (slug: string, settings: Record<string, unknown> = {}): ProjectRow => ({
  id: randomUUID(), tenantId: tenant.id, slug, name: slug, parentProjectId: null, state: 'active', settings, createdAt: '', updatedAt: '',
});
const shop = mkProject('shop');
const other = mkProject('other');
const closed = mkProject('closed', { identity: { registration: 'closed' } });
const reveal = mkProject('reveal', { identity: { revealTakenEmail: true } });
const projects = [shop, other, closed, reveal];

before(async () => {
  db = await PgliteClient.open(undefined);
  await migratePlatform(db);
  await db.query('INSERT INTO plinth.tenants (id, slug, name) VALUES ($1, $2, $3)', [tenant.id, tenant.slug, tenant.name]);
  for (const p of projects) await db.query('INSERT INTO plinth.projects (id, tenant_id, slug, name, settings) VALUES ($1, $2, $3, $3, $4)', [p.id, tenant.id, p.slug, JSON.stringify(p.settings)]);
  const stub = {} as never;
  services = {
    db,
    log: createLogger('silent'),
    nodeId: 'test',
    adminTokenDigest: createHash('sha256').update(ADMIN).digest(),
    tokens: new JwtTokenVerifier(db),
    scopes: {
      tenant: async (s) => (s === tenant.slug || s === tenant.id ? tenant : null),
      project: async (_t, s) => projects.find((p) => p.slug === s || p.id === s) ?? null,
      branchExists: async () => false,
      invalidate: () => {},
    },
    publications: { current: async () => ({ byCollection: new Map(), operations: new Map() }) as never, serving: async () => ({ byCollection: new Map(), operations: new Map() }) as never, install: () => {}, invalidate: () => {} },
    grants: new SqlGrantSource(db),
    audit: { record: () => {}, flush: async () => {} },
    outbox: { kick: () => {} },
    control: stub,
    limits: { maxPageSize: 200, maxBatchRows: 1000, idempotencyRetentionMs: 86_400_000 },
    node: { mode: 'single', draining: false, check: async () => ({ ok: true, checks: {} }), members: async () => [] },
    streams: { slots: new StreamSlots(), pages: new CheckSlots(2) },
  };
});
after(async () => { await db.close(); });

interface Call { bearer?: string | null; project?: ProjectRow | null; body?: unknown; params?: Record<string, string> }

async function call(spec: OperationSpec, c: Call = {}): Promise<{ status: number; body: any }> {
  const project = c.project === undefined ? shop : c.project;
  const inv: Invocation = {
    correlationId: randomUUID(), protocol: 'rest', operation: spec, collection: null, relation: null,
    params: c.params ?? {}, query: new Map(), body: c.body, bearer: c.bearer ?? null,
    tenantHeader: project === null ? null : tenant.slug, projectHeader: project?.slug ?? null, branchHeader: null, idempotencyKey: null, ifMatch: null, basePath: '/api',
  };
  const out: Outcome = await dispatch(inv, services);
  if (out.ok) return { status: out.result.status, body: out.result.body };
  return { status: ({ UNAUTHORIZED: 401, ACCESS_DENIED: 403, NOT_FOUND: 404, CONFLICT: 409, VALIDATION_FAILED: 422 } as Record<string, number>)[out.error.code] ?? 500, body: { error: { code: out.error.code, reasonCode: out.error.reasonCode, field: out.error.details.field } } };
}

const S = IDENTITY_SPECS;
const email = () => `u${randomUUID().slice(0, 8)}@Example.com`;

async function registerAndLogin(project = shop) {
  const e = email();
  const reg = await call(S['Identity.Register'], { project, body: { email: e, password: 'password-123' } });
  assert.equal(reg.status, 201, JSON.stringify(reg.body));
  const login = await call(S['Identity.Login'], { project, body: { email: e, password: 'password-123' } });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  return { email: e.toLowerCase(), subjectId: reg.body.data.subjectId as string, ...(login.body as { accessToken: string; refreshToken: string; sessionId: string; expiresAt: string }) };
}

describe('identity operations (pipeline)', () => {
  it('register → login → me', async () => {
    const u = await registerAndLogin();
    const me = await call(S['Identity.Me'], { bearer: u.accessToken });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.data, { kind: 'user', subjectId: u.subjectId, email: u.email, projectId: shop.id, roles: ['authenticated'], sessionId: u.sessionId, strength: 'password' });
    const adminMe = await call(S['Identity.Me'], { bearer: ADMIN });
    assert.equal(adminMe.body.data.kind, 'admin');
  });

  it('validates register bodies', async () => {
    const r = (body: unknown, project = shop) => call(S['Identity.Register'], { project, body });
    assert.equal((await r({ email: 'bad', password: 'password-123' })).body.error.reasonCode, 'Identity.InvalidEmail');
    assert.equal((await r({ email: email(), password: 'short' })).body.error.reasonCode, 'Identity.WeakPassword');
    assert.equal((await r({ email: email(), password: 12345678 })).body.error.reasonCode, 'Identity.WeakPassword');
    assert.equal((await r({ email: email(), password: 'password-123', admin: true })).body.error.reasonCode, 'Identity.UnknownProperty');
    for (const b of [null, [], 'x', 3, undefined]) assert.equal((await r(b)).status, 422);
    const e = email();
    assert.equal((await r({ email: e, password: 'password-123' })).status, 201);
    // a taken address answers like a new one (no account enumeration) and creates nothing
    const dup = await r({ email: `  ${e.toUpperCase()} `, password: 'password-456' });
    assert.equal(dup.status, 201);
    assert.equal(dup.body.data.email, e.toLowerCase());
    const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM plinth.identity_subjects WHERE project_id = $1 AND email = $2', [shop.id, e.toLowerCase()]);
    assert.equal(rows.rows[0]!.n, 1);
    const revealed = await r({ email: e, password: 'password-456' }, reveal);
    assert.equal(revealed.status, 201);
    const taken = await r({ email: e, password: 'password-456' }, reveal);
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.reasonCode, 'Identity.EmailTaken');
    // the same email in another project is another account
    assert.equal((await r({ email: e, password: 'password-123' }, other)).status, 201);
    const shut = await r({ email: email(), password: 'password-123' }, closed);
    assert.equal(shut.status, 403);
    assert.equal(shut.body.error.reasonCode, 'Identity.RegistrationClosed');
    // the admin can still provision accounts
    assert.equal((await call(S['Identity.Register'], { project: closed, bearer: ADMIN, body: { email: email(), password: 'password-123' } })).status, 201);
  });

  it('login failures read the same for unknown email and wrong password', async () => {
    const u = await registerAndLogin();
    for (const body of [{ email: u.email, password: 'wrong-password' }, { email: email(), password: 'password-123' }, { email: 'not-an-email', password: 'password-123' }, { email: u.email, password: 'x'.repeat(300) }]) {
      const res = await call(S['Identity.Login'], { body });
      assert.equal(res.status, 401, JSON.stringify(body));
      assert.deepEqual(res.body.error, { code: 'UNAUTHORIZED', reasonCode: 'Identity.InvalidCredentials', field: undefined });
    }
    // the right password in another project is no credential there
    assert.equal((await call(S['Identity.Login'], { project: other, body: { email: u.email, password: 'password-123' } })).status, 401);
  });

  it('refresh rotates; reuse of a rotated token revokes the session', async () => {
    const u = await registerAndLogin();
    const r1 = await call(S['Identity.Refresh'], { body: { refreshToken: u.refreshToken } });
    assert.equal(r1.status, 200);
    assert.equal(r1.body.sessionId, u.sessionId);
    assert.notEqual(r1.body.refreshToken, u.refreshToken);
    const r2 = await call(S['Identity.Refresh'], { body: { refreshToken: r1.body.refreshToken } });
    assert.equal(r2.status, 200);
    // theft: the first (rotated) token comes back
    const reuse = await call(S['Identity.Refresh'], { body: { refreshToken: u.refreshToken } });
    assert.equal(reuse.status, 401);
    assert.equal(reuse.body.error.reasonCode, 'Identity.InvalidRefreshToken');
    // the whole session is gone: the newest refresh token and its access token fail
    assert.equal((await call(S['Identity.Refresh'], { body: { refreshToken: r2.body.refreshToken } })).status, 401);
    assert.equal((await call(S['Identity.Me'], { bearer: r2.body.accessToken })).status, 401);
  });

  it('a forged secret for a known session is refused without revoking it', async () => {
    const u = await registerAndLogin();
    const forged = `${u.sessionId}.${Buffer.alloc(48, 7).toString('base64url')}`;
    assert.equal((await call(S['Identity.Refresh'], { body: { refreshToken: forged } })).status, 401);
    assert.equal((await call(S['Identity.Refresh'], { body: { refreshToken: u.refreshToken } })).status, 200);
    for (const bad of ['', 'x', `${u.sessionId}`, 42]) {
      const res = await call(S['Identity.Refresh'], { body: { refreshToken: bad } });
      assert.ok(res.status === 401 || res.status === 422, String(bad));
    }
    // another project's refresh token
    const v = await registerAndLogin(other);
    assert.equal((await call(S['Identity.Refresh'], { body: { refreshToken: v.refreshToken } })).status, 401);
  });

  it('sessions: list, revoke own, not others', async () => {
    const u = await registerAndLogin();
    const second = await call(S['Identity.Login'], { body: { email: u.email, password: 'password-123' } });
    const list = await call(S['Identity.Sessions.List'], { bearer: u.accessToken });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 2);
    const cur = list.body.data.find((s: any) => s.current);
    assert.equal(cur.id, u.sessionId);
    assert.deepEqual(Object.keys(cur).sort(), ['createdAt', 'current', 'expiresAt', 'id', 'lastRefreshedAt', 'revokedAt']);
    const days = (Date.parse(cur.expiresAt) - Date.parse(cur.createdAt)) / 86_400_000;
    assert.ok(Math.abs(days - 30) < 0.01, String(days));

    const stranger = await registerAndLogin();
    const nope = await call(S['Identity.Sessions.Revoke'], { bearer: stranger.accessToken, params: { sessionId: u.sessionId } });
    assert.equal(nope.status, 404);
    assert.equal(nope.body.error.reasonCode, 'Identity.SessionNotFound');
    assert.equal((await call(S['Identity.Sessions.Revoke'], { bearer: u.accessToken, params: { sessionId: 'junk' } })).status, 404);

    const ok = await call(S['Identity.Sessions.Revoke'], { bearer: u.accessToken, params: { sessionId: second.body.sessionId } });
    assert.equal(ok.status, 204);
    assert.equal((await call(S['Identity.Refresh'], { body: { refreshToken: second.body.refreshToken } })).status, 401);
    assert.equal((await call(S['Identity.Me'], { bearer: second.body.accessToken })).status, 401);
    const after = await call(S['Identity.Sessions.List'], { bearer: u.accessToken });
    assert.ok(after.body.data.find((s: any) => s.id === second.body.sessionId).revokedAt);
    const adminList = await call(S['Identity.Sessions.List'], { bearer: ADMIN });
    assert.equal(adminList.status, 422);
    assert.equal(adminList.body.error.reasonCode, 'Identity.UserTokenRequired');
  });

  it('tokens are bound to their project', async () => {
    const u = await registerAndLogin();
    const res = await call(S['Identity.Me'], { bearer: u.accessToken, project: other });
    assert.equal(res.status, 401);
  });

  it('capability grants: create, list, delete; admin only', async () => {
    const u = await registerAndLogin();
    const path = { projectId: shop.id };
    const create = (body: unknown, bearer = ADMIN, params: Record<string, string> = path) => call(S['Projects.CapabilityGrants.Create'], { bearer, params, body, project: null });
    const c = await create({ role: 'authenticated', grant: 'entity:Order:read' });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    assert.equal(c.body.surface, 'CapabilityGrant');
    assert.equal(c.body.state, 'active');
    assert.equal(c.body.data.role, 'authenticated');
    assert.equal(c.body.data.subjectId, null);
    assert.equal(c.body.data.projectId, shop.id);
    const again = await create({ role: 'authenticated', grant: 'entity:Order:read' });
    assert.equal(again.body.data.grantId, c.body.data.grantId);
    const s = await create({ subjectId: u.subjectId, grant: 'entity:*:*' });
    assert.equal(s.status, 201);
    assert.deepEqual([...await services.grants.held(shop.id, u.subjectId, [])], ['entity:*:*']);

    for (const bad of [{ grant: 'entity:Order:read' }, { role: 'a', subjectId: u.subjectId, grant: 'entity:Order:read' }, { role: 'x', grant: 'entity:order:read' },
      { role: 'x', grant: 'entity:Order:write' }, { role: 'x', grant: 'table:Order:read' }, { subjectId: randomUUID(), grant: 'entity:Order:read' }, { role: 'x', grant: 'entity:Order:read', extra: 1 }, 'nope']) {
      assert.equal((await create(bad)).status, 422, JSON.stringify(bad));
    }
    assert.equal((await create({ role: 'x', grant: 'entity:Order:read' }, ADMIN, { projectId: randomUUID() })).body.error.reasonCode, 'Scope.ProjectNotFound');
    assert.equal((await create({ role: 'x', grant: 'entity:Order:read' }, ADMIN, { projectId: 'nope' })).status, 404);
    const denied = await create({ role: 'x', grant: 'entity:Order:read' }, u.accessToken);
    assert.equal(denied.status, 403);

    const list = await call(S['Projects.CapabilityGrants.List'], { bearer: ADMIN, params: path, project: null });
    assert.equal(list.body.state, 'listed');
    assert.equal(list.body.data.length, 2);
    const del = await call(S['Projects.CapabilityGrants.Delete'], { bearer: ADMIN, params: { ...path, grantId: s.body.data.grantId }, project: null });
    assert.equal(del.status, 204);
    assert.deepEqual([...await services.grants.held(shop.id, u.subjectId, [])], []);
    assert.equal((await call(S['Projects.CapabilityGrants.Delete'], { bearer: ADMIN, params: { ...path, grantId: s.body.data.grantId }, project: null })).status, 404);
  });
});
