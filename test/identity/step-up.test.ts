/**
 * Step-up (CONTRACT: Authorization → Step-up): TOTP enrolment, the two
 * challenge route pairs, the 5-attempt rule, one-time codes, elevated tokens
 * (strength claim, its expiry, forged and expired ones), bad input.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { compileErrors, validate } from '@readme/openapi-parser';
import { STATIC_ROUTES } from '../../adapters/rest/routes.js';
import { EMPTY_MODEL } from '../../runtime/publication/model.js';
import { buildOpenApiDocument } from '../../runtime/publication/openapi.js';
import { declaredOpenApi } from '../../runtime/operations/contract/index.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';
import { projectSigningKey } from '../../runtime/identity/index.js';
import { bootstrapProject, type Client } from '../support/client.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';
import { enrolTotp, jwtPayload, newUser, TotpApp, type TestUser } from '../support/mfa.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

forEachBackend('step-up', (backend: Backend) => {
  let server: TestServer;
  let project: Client;
  let projectId: string;
  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    project = p.client;
    projectId = p.projectId;
  });
  after(async () => { await server?.close(); });

  const startChallenge = async (user: TestUser, requireStrength = 'mfa-totp'): Promise<string> => {
    const r = await user.as.post('/api/identity/challenges', { subjectId: user.subjectId, requireStrength });
    expectStatus(r, 201);
    return r.body.data.challengeId;
  };

  it('TOTP enrolment: base32 secret of ≥128 bits, otpauth URL, confirm with a code once; wrong code 4xx', async () => {
    const u = await newUser(project);
    // without a body too (a pending secret is simply replaced)
    expectStatus(await u.as.post('/api/identity/mfa/totp'), 201);
    const r = await u.as.post('/api/identity/mfa/totp', {});
    expectStatus(r, 201);
    const { secret, otpauthUrl } = r.body.data;
    assert.match(secret, /^[A-Z2-7]+$/);
    assert.ok(secret.length * 5 >= 128 && secret.length >= 16);
    assert.ok(otpauthUrl.startsWith('otpauth://totp/'));
    assert.equal(new URL(otpauthUrl).searchParams.get('secret'), secret);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    // stored sealed: the secret text appears in no platform row
    const rows = await server.node.services.db.query<{ t: string }>("SELECT sealed AS t FROM plinth.secrets WHERE project_id = $1", [projectId]);
    assert.ok(rows.rows.length >= 1 && rows.rows.every((x) => !x.t.includes(secret)));

    const app = new TotpApp(secret);
    expectError(await u.as.post('/api/identity/mfa/totp/confirm', { code: app.wrongCode() }), 403, 'ACCESS_DENIED', 'Identity.InvalidCode');
    const code = app.code();
    expectStatus(await u.as.post('/api/identity/mfa/totp/confirm', { code }), 200);
    // nothing pending any more; and the code it used is spent for challenges too
    expectError(await u.as.post('/api/identity/mfa/totp/confirm', { code }), 409, 'CONFLICT', 'Identity.NoPendingTotp');
    const c = await startChallenge(u);
    expectError(await u.anon.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code } }), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');

    // enrolment is the user's own: no token 401, admin 4xx, bad bodies 422
    expectError(await u.anon.post('/api/identity/mfa/totp', {}), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    assert.equal((await project.post('/api/identity/mfa/totp', {})).status, 422);
    for (const body of [{}, { code: 123456 }, { code: '12345' }, { code: 'abcdef' }, { code: '123456', extra: 1 }, []]) {
      assert.equal((await u.as.post('/api/identity/mfa/totp/confirm', body)).status, 422, JSON.stringify(body));
    }
  });

  it('a subject with a confirmed factor needs an elevated token to enrol another TOTP secret', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const e = expectError(await u.as.post('/api/identity/mfa/totp', {}), 403, 'ACCESS_DENIED', 'Access.StepUpRequired');
    assert.equal((e as any).decision, 'Challenge');
    assert.equal((e as any).requiredStrength, 'mfa-totp');
    const c = await startChallenge(u);
    const done = await u.anon.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.code() } });
    expectStatus(done, 200);
    const elevated = u.anon.with({ token: done.body.accessToken });
    const again = await elevated.post('/api/identity/mfa/totp', {});
    expectStatus(again, 201);
    // the old factor stays until the new one is confirmed
    const next = new TotpApp(again.body.data.secret);
    expectStatus(await elevated.post('/api/identity/mfa/totp/confirm', { code: next.code() }), 200);
  });

  it('challenges + complete: 201 challenge, 200 login-shaped session whose token carries mfa-totp and authenticates', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const r = await u.as.post('/api/identity/challenges', { subjectId: u.subjectId, requireStrength: 'mfa-totp' });
    expectStatus(r, 201);
    assert.match(r.body.data.challengeId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(r.body.data.proofKinds, ['totp']);
    assert.equal(r.body.data.requireStrength, 'mfa-totp');
    const done = await u.as.post(`/api/identity/challenges/${r.body.data.challengeId}/complete`, { proof: { kind: 'totp', code: app.code() } });
    expectStatus(done, 200);
    assert.deepEqual(Object.keys(done.body).sort(), ['accessToken', 'expiresAt', 'refreshToken', 'sessionId']);
    const payload = jwtPayload(done.body.accessToken);
    assert.equal(payload.strength, 'mfa-totp');
    assert.equal(payload.sub, u.subjectId);
    assert.ok(payload.strength_exp > Date.now() / 1000 && payload.strength_exp <= payload.exp);
    const me = await u.anon.with({ token: done.body.accessToken }).get('/api/identity/me');
    expectStatus(me, 200);
    assert.equal(me.body.data.strength, 'mfa-totp');
    assert.equal(me.body.data.sessionId, done.body.sessionId);
    // login's token is unchanged: no strength claim, actor strength password
    assert.equal(jwtPayload(u.token).strength, undefined);
    assert.equal((await u.as.get('/api/identity/me')).body.data.strength, 'password');
    // the elevated session's refresh gives back a password-strength token
    const refreshed = await u.anon.post('/api/identity/tokens/refresh', { refreshToken: done.body.refreshToken });
    expectStatus(refreshed, 200);
    assert.equal(jwtPayload(refreshed.body.accessToken).strength, undefined);
    // one-time: the completed challenge refuses another (valid) proof
    expectError(await u.as.post(`/api/identity/challenges/${r.body.data.challengeId}/complete`, { proof: { kind: 'totp', code: app.code() } }), 409, 'CONFLICT', 'Identity.ChallengeCompleted');
  });

  it('challenge/start + challenge/verify do the same', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const s = await u.as.post('/api/identity/challenge/start', { subjectId: u.subjectId, requireStrength: 'mfa-totp', reason: 'delete the project' });
    assert.ok(s.status === 200 || s.status === 201);
    const challengeId = s.body.data.challengeId;
    assert.equal(s.body.data.reason, 'delete the project');
    expectError(await u.as.post('/api/identity/challenge/verify', { challengeId, proof: { kind: 'totp', code: app.wrongCode() } }), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    const v = await u.as.post('/api/identity/challenge/verify', { challengeId, proof: { kind: 'totp', code: app.code() } });
    expectStatus(v, 200);
    assert.equal(jwtPayload(v.body.accessToken).strength, 'mfa-totp');
    expectStatus(await u.anon.with({ token: v.body.accessToken }).get('/api/identity/me'), 200);
  });

  it('after 5 wrong codes the challenge is dead and refuses the right one; concurrent guesses cannot exceed 5', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const c = await startChallenge(u);
    for (let i = 0; i < 5; i++) {
      expectError(await u.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.wrongCode() } }), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    }
    expectError(await u.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.code() } }), 403, 'ACCESS_DENIED', 'Identity.ChallengeExhausted');

    const d = await startChallenge(u);
    const replies = await Promise.all(Array.from({ length: 12 }, () => u.as.post('/api/identity/challenge/verify', { challengeId: d, proof: { kind: 'totp', code: app.wrongCode() } })));
    const reasons = replies.map((r) => { assert.equal(r.status, 403); return r.body.error.reasonCode as string; });
    assert.ok(reasons.filter((x) => x === 'Identity.InvalidProof').length <= 5, reasons.join());
    assert.equal(reasons.filter((x) => x !== 'Identity.InvalidProof' && x !== 'Identity.ChallengeExhausted').length, 0, reasons.join());
    expectError(await u.as.post('/api/identity/challenge/verify', { challengeId: d, proof: { kind: 'totp', code: app.code() } }), 403, 'ACCESS_DENIED', 'Identity.ChallengeExhausted');
  });

  it('a code accepted once is refused by the next challenge', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const code = app.code();
    expectStatus(await u.as.post(`/api/identity/challenges/${await startChallenge(u)}/complete`, { proof: { kind: 'totp', code } }), 200);
    expectError(await u.as.post(`/api/identity/challenges/${await startChallenge(u)}/complete`, { proof: { kind: 'totp', code } }), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
  });

  it('one code presented to two challenges at once completes exactly one', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const code = app.code();
    const [c1, c2] = [await startChallenge(u), await startChallenge(u)];
    const replies = await Promise.all([c1, c2].map((c) => u.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code } })));
    assert.deepEqual(replies.map((r) => r.status).sort(), [200, 403], replies.map((r) => r.text).join());
  });

  it('who may start and complete: own subject only (403), others\' challenges 404, admin may start, anonymous may complete with the id', async () => {
    const a = await newUser(project);
    const b = await newUser(project);
    const app = await enrolTotp(a);
    expectError(await b.as.post('/api/identity/challenges', { subjectId: a.subjectId, requireStrength: 'mfa-totp' }), 403, 'ACCESS_DENIED', 'Identity.ChallengeSubjectMismatch');
    expectError(await b.as.post('/api/identity/challenge/start', { subjectId: a.subjectId, requireStrength: 'mfa-totp', reason: 'x' }), 403, 'ACCESS_DENIED', 'Identity.ChallengeSubjectMismatch');
    const c = await startChallenge(a);
    expectError(await b.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.wrongCode() } }), 404, 'NOT_FOUND', 'Identity.ChallengeNotFound');
    expectError(await b.as.post('/api/identity/challenge/verify', { challengeId: c, proof: { kind: 'totp', code: app.wrongCode() } }), 404, 'NOT_FOUND', 'Identity.ChallengeNotFound');
    expectError(await a.anon.post('/api/identity/challenges', { subjectId: a.subjectId, requireStrength: 'mfa-totp' }), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    // another project's user cannot reach it either
    const other = await bootstrapProject(server.url, server.adminToken);
    const stranger = await newUser(other.client);
    expectError(await stranger.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.wrongCode() } }), 404, 'NOT_FOUND', 'Identity.ChallengeNotFound');
    // the admin may start one for any subject of the project; the subject's code completes it
    const byAdmin = await project.post('/api/identity/challenges', { subjectId: a.subjectId, requireStrength: 'mfa-totp' });
    expectStatus(byAdmin, 201);
    expectError(await project.post('/api/identity/challenges', { subjectId: randomUUID(), requireStrength: 'mfa-totp' }), 404, 'NOT_FOUND', 'Identity.SubjectNotFound');
    const done = await a.anon.post(`/api/identity/challenges/${byAdmin.body.data.challengeId}/complete`, { proof: { kind: 'totp', code: app.code() } });
    expectStatus(done, 200);
    assert.equal(jwtPayload(done.body.accessToken).sub, a.subjectId);
  });

  it('a challenge dies with the session that started it, and when it expires', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const c = await startChallenge(u);
    const d = await startChallenge(u);
    // expiry: move d's deadline into the past
    await server.node.services.db.query("UPDATE plinth.identity_challenges SET expires_at = now() - interval '1 second' WHERE id = $1", [d]);
    expectError(await u.as.post(`/api/identity/challenges/${d}/complete`, { proof: { kind: 'totp', code: app.code() } }), 403, 'ACCESS_DENIED', 'Identity.ChallengeExpired');
    const sessionId = jwtPayload(u.token).sid;
    expectStatus(await u.as.delete(`/api/identity/sessions/${sessionId}`), 204);
    expectError(await u.anon.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.code() } }), 401, 'UNAUTHORIZED', 'Identity.ChallengeSessionEnded');
  });

  it('a subject without TOTP gets a challenge it cannot meet with a code; a TOTP proof never meets mfa-webauthn', async () => {
    const u = await newUser(project);
    const r = await u.as.post('/api/identity/challenges', { subjectId: u.subjectId, requireStrength: 'mfa-totp' });
    expectStatus(r, 201);
    assert.deepEqual(r.body.data.proofKinds, []);
    expectError(await u.as.post(`/api/identity/challenges/${r.body.data.challengeId}/complete`, { proof: { kind: 'totp', code: '123456' } }), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    const w = await newUser(project);
    const wapp = await enrolTotp(w);
    const c = await startChallenge(w, 'mfa-webauthn');
    const e = expectError(await w.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: wapp.code() } }), 403, 'ACCESS_DENIED', 'Identity.ProofTooWeak');
    assert.equal((e as any).requiredStrength, 'mfa-webauthn');
  });

  it('bad input: 4xx with the envelope, never 5xx', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    const c = await startChallenge(u);
    const starts: unknown[] = [
      [], 'x', {}, { subjectId: u.subjectId }, { subjectId: u.subjectId, requireStrength: 'password' }, { subjectId: u.subjectId, requireStrength: 'mfa-sms' },
      { subjectId: 'not-a-uuid', requireStrength: 'mfa-totp' }, { subjectId: 7, requireStrength: 'mfa-totp' }, { subjectId: u.subjectId, requireStrength: 'mfa-totp', extra: true },
      { subjectId: u.subjectId, requireStrength: 'mfa-totp', reason: 42 }, { subjectId: u.subjectId, requireStrength: 'mfa-totp', reason: 'r'.repeat(501) },
    ];
    for (const body of starts) {
      const r = await u.as.post('/api/identity/challenges', body);
      assert.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(body)} → ${r.status}`);
      assert.ok(r.body.error.code && r.body.error.reasonCode && r.body.error.correlationId, r.text);
    }
    const proofs: unknown[] = [
      {}, { proof: null }, { proof: [] }, { proof: {} }, { proof: { kind: 'sms', code: '123456' } }, { proof: { kind: 'totp' } }, { proof: { kind: 'totp', code: 123456 } },
      { proof: { kind: 'totp', code: '12345a' } }, { proof: { kind: 'totp', code: '123456', x: 1 } }, { proof: { kind: 'webauthn' } }, { proof: { kind: 'webauthn', assertion: 'x' } },
      { proof: { kind: 'totp', code: '123456' }, extra: 1 },
    ];
    for (const body of proofs) {
      const r = await u.as.post(`/api/identity/challenges/${c}/complete`, body);
      assert.equal(r.status, 422, `${JSON.stringify(body)} → ${r.status} ${r.text}`);
    }
    for (const body of [{}, { challengeId: 'nope', proof: { kind: 'totp', code: '123456' } }, { challengeId: c }]) {
      assert.equal((await u.as.post('/api/identity/challenge/verify', body)).status, 422, JSON.stringify(body));
    }
    // none of the malformed proofs counted as an attempt
    expectStatus(await u.as.post(`/api/identity/challenges/${c}/complete`, { proof: { kind: 'totp', code: app.code() } }), 200);
    expectError(await u.as.post(`/api/identity/challenges/${randomUUID()}/complete`, { proof: { kind: 'totp', code: '123456' } }), 404, 'NOT_FOUND', 'Identity.ChallengeNotFound');
    expectError(await u.as.post('/api/identity/challenges/not-a-uuid/complete', { proof: { kind: 'totp', code: '123456' } }), 404, 'NOT_FOUND', 'Identity.ChallengeNotFound');
    expectError(await u.as.post('/api/identity/challenge/verify', { challengeId: randomUUID(), proof: { kind: 'totp', code: '123456' } }), 404, 'NOT_FOUND', 'Identity.ChallengeNotFound');
  });

  it('elevated tokens: forged, expired and unknown strengths are 401; a lapsed elevation reads as password', async () => {
    const u = await newUser(project);
    const key = await projectSigningKey(server.node.services.db, projectId);
    const sid = jwtPayload(u.token).sid;
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Record<string, unknown>, exp: number, k: Uint8Array = key) => new SignJWT({ sid, role: 'authenticated', ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer('plinth').setAudience(projectId).setSubject(u.subjectId).setIssuedAt(now - 5).setExpirationTime(exp).sign(k);
    const me = async (token: string) => u.anon.with({ token }).get('/api/identity/me');

    const good = await sign({ strength: 'mfa-webauthn', strength_exp: now + 300 }, now + 300);
    expectStatus(await me(good), 200);
    assert.equal((await me(good)).body.data.strength, 'mfa-webauthn');
    const lapsed = await sign({ strength: 'mfa-totp', strength_exp: now - 1 }, now + 300);
    assert.equal((await me(lapsed)).body.data.strength, 'password');
    // verified (and cached) while elevated, then the elevation lapses: the next request is password
    const until = Math.floor(Date.now() / 1000) + 3;
    const brief = await sign({ strength: 'mfa-totp', strength_exp: until }, now + 300);
    assert.equal((await me(brief)).body.data.strength, 'mfa-totp');
    await new Promise((r) => setTimeout(r, until * 1000 - Date.now() + 100));
    assert.equal((await me(brief)).body.data.strength, 'password');
    expectError(await me(await sign({ strength: 'mfa-totp', strength_exp: now + 300 }, now - 1)), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    expectError(await me(await sign({ strength: 'root', strength_exp: now + 300 }, now + 300)), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    expectError(await me(await sign({ strength: 'mfa-totp' }, now + 300)), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    expectError(await me(await sign({ strength: 'mfa-totp', strength_exp: now + 300 }, now + 300, new Uint8Array(32).fill(7))), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    // a login token with a strength claim grafted on (payload edited, signature kept) is refused
    const [h, , s] = u.token.split('.');
    const grafted = Buffer.from(JSON.stringify({ ...jwtPayload(u.token), strength: 'mfa-webauthn', strength_exp: now + 300 })).toString('base64url');
    expectError(await me(`${h}.${grafted}.${s}`), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
  });
});

describe('step-up in the OpenAPI document', () => {
  it('documents every step-up route with its operation id; completion is open (scope headers only); the document validates', async () => {
    const doc = buildOpenApiDocument({ model: EMPTY_MODEL, publicationVersion: 1, tenantSlug: 'acme', projectSlug: 'shop', basePath: '/api', platform: declaredOpenApi(PLATFORM_OPERATIONS) }) as Json;
    const routes = STATIC_ROUTES.filter((r) => /^identity\/(mfa|challenge)/.test(r.path));
    assert.equal(routes.length, 8);
    for (const r of routes) {
      const path = `/${r.path.replace(/:(\w+)/g, '{$1}')}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      assert.ok(op, `${r.method} ${path} is documented`);
      assert.equal(op.operationId, r.spec.id);
      assert.equal(op.security !== undefined && !op.security.some((s: Json) => 'bearerAuth' in s), r.spec.authn === 'public', `${path} security`);
    }
    const result = await validate(JSON.parse(JSON.stringify(doc)));
    assert.equal(result.valid, true, result.valid ? '' : compileErrors(result));
  });
});
