/**
 * WebAuthn step-up with a software authenticator (test/support/webauthn-authenticator.ts):
 * registration (options + verify, `none` attestation), assertions as challenge proofs,
 * origin / RP id / challenge / key checks, and the strength the session gets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { InvalidConfig, parseConfig } from '../../node/config.js';
import { bootstrapProject, type Client } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { enrolTotp, jwtPayload, newUser, type TestUser } from '../support/mfa.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { SoftwareAuthenticator } from '../support/webauthn-authenticator.js';

const RP_ID = 'app.example.test';
const ORIGIN = 'https://app.example.test';

forEachBackend('webauthn step-up', (backend: Backend) => {
  let server: TestServer;
  let project: Client;
  before(async () => {
    server = await startServer({ backend, env: { WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGIN: `${ORIGIN},https://other.example.test` } });
    project = (await bootstrapProject(server.url, server.adminToken)).client;
  });
  after(async () => { await server?.close(); });

  /** Registers a software authenticator for the user (whose token must be allowed to enrol). */
  async function register(user: TestUser, as: Client = user.as): Promise<SoftwareAuthenticator> {
    const auth = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const o = await as.post('/api/identity/mfa/webauthn/registration/options', {});
    expectStatus(o, 201);
    const v = await as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId: o.body.data.registrationId, response: auth.register(o.body.data.options.challenge) });
    expectStatus(v, 201);
    assert.equal(v.body.data.credentialId, auth.id);
    return auth;
  }

  async function challenge(user: TestUser, requireStrength: string): Promise<{ id: string; webauthnChallenge: string; body: any }> {
    const r = await user.as.post('/api/identity/challenges', { subjectId: user.subjectId, requireStrength });
    expectStatus(r, 201);
    return { id: r.body.data.challengeId, webauthnChallenge: r.body.data.webauthnOptions?.challenge, body: r.body.data };
  }

  it('registration: options name the RP and the user; a none-attestation response registers the key once', async () => {
    const u = await newUser(project);
    const auth = new SoftwareAuthenticator({ rpId: RP_ID, origin: ORIGIN });
    const o = await u.as.post('/api/identity/mfa/webauthn/registration/options', {});
    expectStatus(o, 201);
    const { registrationId, options } = o.body.data;
    assert.equal(options.rp.id, RP_ID);
    assert.equal(options.user.name, u.email);
    assert.equal(options.attestation, 'none');
    assert.ok(options.pubKeyCredParams.some((p: any) => p.alg === -7), 'ES256 offered');
    assert.ok(Buffer.from(options.challenge, 'base64url').length >= 16);
    // wrong origin, wrong RP id, wrong challenge, wrong ceremony type: refused, and each spends an attempt
    expectError(await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register(options.challenge, { origin: 'https://evil.example' }) }), 403, 'ACCESS_DENIED', 'Identity.InvalidAttestation');
    expectError(await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register(options.challenge, { rpId: 'evil.example' }) }), 403, 'ACCESS_DENIED', 'Identity.InvalidAttestation');
    expectError(await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register('AAAAAAAAAAAAAAAAAAAAAA') }), 403, 'ACCESS_DENIED', 'Identity.InvalidAttestation');
    expectError(await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register(options.challenge, { type: 'webauthn.get' }) }), 403, 'ACCESS_DENIED', 'Identity.InvalidAttestation');
    const ok = await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register(options.challenge) });
    expectStatus(ok, 201);
    assert.equal(ok.body.data.credentialId, auth.id);
    // one-time
    expectError(await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register(options.challenge) }), 403, 'ACCESS_DENIED', 'Identity.RegistrationClosed');
    // another user cannot see the registration; bad bodies are 422
    const other = await newUser(project);
    expectError(await other.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId, response: auth.register(options.challenge) }), 404, 'NOT_FOUND', 'Identity.RegistrationNotFound');
    for (const body of [{}, { registrationId }, { registrationId: 'x', response: {} }, { registrationId, response: 'x' }, { registrationId, response: {}, extra: 1 }]) {
      assert.equal((await u.as.post('/api/identity/mfa/webauthn/registration/verify', body)).status, 422, JSON.stringify(body));
    }
    expectError(await u.as.post('/api/identity/mfa/webauthn/registration/verify', { registrationId: randomUUID(), response: {} }), 404, 'NOT_FOUND', 'Identity.RegistrationNotFound');
  });

  it('a challenge for mfa-webauthn carries request options; the assertion completes it with an mfa-webauthn session', async () => {
    const u = await newUser(project);
    const auth = await register(u);
    const c = await challenge(u, 'mfa-webauthn');
    assert.deepEqual(c.body.proofKinds, ['webauthn']);
    assert.equal(c.body.webauthnOptions.rpId, RP_ID);
    assert.deepEqual(c.body.webauthnOptions.allowCredentials.map((x: any) => x.id), [auth.id]);
    const done = await u.as.post(`/api/identity/challenges/${c.id}/complete`, { proof: { kind: 'webauthn', assertion: auth.assert(c.webauthnChallenge) } });
    expectStatus(done, 200);
    assert.deepEqual(Object.keys(done.body).sort(), ['accessToken', 'expiresAt', 'refreshToken', 'sessionId']);
    assert.equal(jwtPayload(done.body.accessToken).strength, 'mfa-webauthn');
    const me = await u.anon.with({ token: done.body.accessToken }).get('/api/identity/me');
    expectStatus(me, 200);
    assert.equal(me.body.data.strength, 'mfa-webauthn');
  });

  it('WebAuthn meets mfa-totp too (through challenge/start + verify); TOTP never meets mfa-webauthn', async () => {
    const u = await newUser(project);
    const app = await enrolTotp(u);
    // a second factor needs an elevated token: a password session is told to step up
    const refused = expectError(await u.as.post('/api/identity/mfa/webauthn/registration/options', {}), 403, 'ACCESS_DENIED', 'Access.StepUpRequired');
    assert.equal((refused as any).decision, 'Challenge');
    const t = await challenge(u, 'mfa-totp');
    const elevated = await u.as.post(`/api/identity/challenges/${t.id}/complete`, { proof: { kind: 'totp', code: app.code() } });
    expectStatus(elevated, 200);
    const auth = await register(u, u.anon.with({ token: elevated.body.accessToken }));

    const s = await u.as.post('/api/identity/challenge/start', { subjectId: u.subjectId, requireStrength: 'mfa-totp', reason: 'export' });
    expectStatus(s, 201);
    assert.deepEqual(s.body.data.proofKinds, ['totp', 'webauthn']);
    const v = await u.as.post('/api/identity/challenge/verify', { challengeId: s.body.data.challengeId, proof: { kind: 'webauthn', assertion: auth.assert(s.body.data.webauthnOptions.challenge) } });
    expectStatus(v, 200);
    assert.equal(jwtPayload(v.body.accessToken).strength, 'mfa-webauthn', 'the strength reached is the proof\'s');

    const w = await challenge(u, 'mfa-webauthn');
    expectError(await u.as.post(`/api/identity/challenges/${w.id}/complete`, { proof: { kind: 'totp', code: app.code() } }), 403, 'ACCESS_DENIED', 'Identity.ProofTooWeak');
  });

  it('refuses assertions signed by another key, for another origin or RP, for another challenge, or replayed', async () => {
    const u = await newUser(project);
    const auth = await register(u);
    const c = await challenge(u, 'mfa-webauthn');
    const proof = (assertion: unknown) => ({ proof: { kind: 'webauthn', assertion } });
    const complete = (body: unknown) => u.as.post(`/api/identity/challenges/${c.id}/complete`, body);
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expectError(await complete(proof(auth.assert(c.webauthnChallenge, { signWith: stranger }))), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    expectError(await complete(proof(auth.assert(c.webauthnChallenge, { origin: 'https://evil.example' }))), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    expectError(await complete(proof(auth.assert(c.webauthnChallenge, { rpId: 'evil.example' }))), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    expectError(await complete(proof({ id: auth.id, garbage: true })), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    // a good assertion for an older challenge does not meet this one
    const other = await challenge(u, 'mfa-webauthn');
    expectError(await complete(proof(auth.assert(other.webauthnChallenge))), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    // 5 wrong: dead, even for the right assertion
    expectError(await complete(proof(auth.assert(c.webauthnChallenge))), 403, 'ACCESS_DENIED', 'Identity.ChallengeExhausted');

    // replay: the assertion that completed one challenge does not complete the next
    const d = await challenge(u, 'mfa-webauthn');
    const good = auth.assert(d.webauthnChallenge);
    expectStatus(await u.as.post(`/api/identity/challenges/${d.id}/complete`, proof(good)), 200);
    const e = await challenge(u, 'mfa-webauthn');
    expectError(await u.as.post(`/api/identity/challenges/${e.id}/complete`, proof(good)), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
    // another origin from WEBAUTHN_ORIGIN's list is accepted
    const alt = await u.as.post(`/api/identity/challenges/${e.id}/complete`, proof(auth.assert(e.webauthnChallenge, { origin: 'https://other.example.test' })));
    expectStatus(alt, 200);
  });

  it('a user cannot step up with another user\'s authenticator', async () => {
    const a = await newUser(project);
    const b = await newUser(project);
    const authA = await register(a);
    const c = await challenge(b, 'mfa-webauthn');
    assert.deepEqual(c.body.proofKinds, []);
    assert.equal(c.body.webauthnOptions, undefined);
    expectError(await b.as.post(`/api/identity/challenges/${c.id}/complete`, { proof: { kind: 'webauthn', assertion: authA.assert('AAAAAAAAAAAAAAAAAAAAAA') } }), 403, 'ACCESS_DENIED', 'Identity.InvalidProof');
  });
});

describe('WebAuthn relying-party configuration', () => {
  const base = { SERVICE_ADMIN_TOKEN: 'x'.repeat(32) };
  it('defaults to localhost and the node\'s own http origin; takes a comma-separated origin list', () => {
    assert.deepEqual(parseConfig({ ...base, PORT: '9123' }).webauthn, { rpId: 'localhost', origins: ['http://localhost:9123'] });
    assert.deepEqual(parseConfig({ ...base, WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGIN: 'https://example.com, https://app.example.com:8443' }).webauthn,
      { rpId: 'example.com', origins: ['https://example.com', 'https://app.example.com:8443'] });
  });
  it('refuses origins with a path, other schemes, and RP ids that are not host names', () => {
    for (const origin of ['https://example.com/', 'https://example.com/app', 'ftp://example.com', 'example.com', ' , ']) {
      assert.throws(() => parseConfig({ ...base, WEBAUTHN_ORIGIN: origin }), InvalidConfig, origin);
    }
    assert.throws(() => parseConfig({ ...base, WEBAUTHN_RP_ID: 'https://example.com' }), InvalidConfig);
  });
});
