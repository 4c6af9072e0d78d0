/**
 * Identity federation against a real OpenID provider (`oidc-provider`, the
 * certified Node implementation) on a loopback port: start → the provider's
 * authorization endpoint and login interaction → callback → a session like login's.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { checkProviderUrl, discover, verifyIdToken } from '../../runtime/identity/index.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { forEachBackend, startServer, type Backend } from '../support/server.js';

type Json = Record<string, any>;
interface Reply { status: number; body: Json }

const CLIENT_ID = 'plinth-test';
const CLIENT_SECRET = 'a-client-secret-of-at-least-32-characters';
const REDIRECT = 'https://app.example.test/auth/callback';

interface TestProvider { issuer: string; privateJwk: JWK; server: Server; login(account: string): void }

/** oidc-provider on 127.0.0.1:0; the test answers its login/consent interactions for the account it names. */
async function startProvider(): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let account = 'nobody';
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [privateJwk] },
    pkce: { required: () => true, methods: ['S256'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['test-cookie-signing-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The e-mail claim in the ID token itself (not only at userinfo).
    conformIdTokenClaims: false,
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, email: `${id}@example.com`, email_verified: true }) }),
  } as any);
  const handle = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith('/interaction/')) return void handle(req, res);
    // The "user" logs in, then grants what the client asked for.
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
      grant.addOIDCScope(String(details.params.scope));
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    })().catch((err) => { res.statusCode = 500; res.end(String(err)); });
  });
  return { issuer, privateJwk, server, login: (a) => { account = a; } };
}

/** Follows the authorization URL through the provider's redirects (with its cookies) to the client's redirect URI. */
async function authorize(op: TestProvider, authorizationUrl: string, account: string): Promise<{ code: string; state: string }> {
  op.login(account);
  const jar = new Map<string, string>();
  let next = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(next, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const text = await res.text();
    const location = res.headers.get('location');
    if (location === null) throw new Error(`the provider stopped at ${res.status}: ${text.slice(0, 300)}`);
    const url = new URL(location, next);
    if (url.href.startsWith(REDIRECT)) {
      assert.equal(url.searchParams.get('error'), null, `authorization error: ${url.href}`);
      return { code: url.searchParams.get('code')!, state: url.searchParams.get('state')! };
    }
    next = url.href;
  }
  throw new Error('too many redirects');
}

forEachBackend('identity federation (OIDC)', (backend: Backend) => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let op: TestProvider;
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
    return { status: res.status, body: text === '' ? {} : JSON.parse(text) };
  }

  const expectStatus = (r: Reply, status: number, what: string) => assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
  function expectError(r: Reply, status: number, code: string, reasonCode: string) {
    expectStatus(r, status, reasonCode);
    assert.equal(r.body.error?.code, code);
    assert.equal(r.body.error.reasonCode, reasonCode);
    assert.equal(typeof r.body.error.correlationId, 'string');
  }

  async function createProject(slug: string): Promise<Json> {
    const r = await req('POST', '/api/projects/create', { body: { tenant: tenantSlug, slug, name: slug } });
    expectStatus(r, 201, 'project');
    return { id: r.body.data.id ?? r.body.data.projectId, slug };
  }

  const providerBody = () => ({ issuer: op.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: REDIRECT });

  before(async () => {
    op = await startProvider();
    server = await startServer({ backend, env: { FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true' } });
    expectStatus(await req('POST', '/api/TenantRecord', { body: { slug: tenantSlug, name: 'Federation Test' } }), 201, 'tenant');
    projectA = await createProject('shop');
    projectB = await createProject('other');
    for (const p of [projectA, projectB]) {
      expectStatus(await req('PUT', `/api/projects/${p.id}/identity/providers/acme`, { body: providerBody() }), 201, 'provider');
    }
  });
  after(async () => {
    await server?.close();
    op?.server.closeAllConnections();
    await new Promise((resolve) => op?.server.close(resolve));
  });

  async function start(project: Json): Promise<{ url: string; state: string }> {
    const r = await req('POST', '/api/identity/federation/start', { bearer: null, project, body: { provider: 'acme', redirectUri: REDIRECT } });
    expectStatus(r, 200, 'start');
    assert.equal(r.body.data.authorizationUrl, r.body.data.url);
    return { url: r.body.data.authorizationUrl, state: r.body.data.state };
  }

  const callback = (project: Json, body: Json) => req('POST', '/api/identity/federation/callback', { bearer: null, project, body: { provider: 'acme', ...body } });

  async function federatedLogin(project: Json, account: string): Promise<Json> {
    const s = await start(project);
    const { code, state } = await authorize(op, s.url, account);
    assert.equal(state, s.state);
    const r = await callback(project, { code, state });
    expectStatus(r, 200, 'callback');
    return r.body;
  }

  const me = async (project: Json, token: string) => {
    const r = await req('GET', '/api/identity/me', { bearer: token, project });
    expectStatus(r, 200, 'me');
    return r.body.data;
  };

  it('providers are admin-only, never return the client secret, and need one on creation', async () => {
    const list = await req('GET', `/api/projects/${projectA.id}/identity/providers`);
    expectStatus(list, 200, 'list');
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].name, 'acme');
    assert.deepEqual(list.body.data[0].scopes, ['openid', 'email', 'profile']);
    assert.ok(!JSON.stringify(list.body).includes(CLIENT_SECRET));
    assert.match(list.body.data[0].clientSecretRef, /^secret:/);
    const { clientSecret: _omit, ...noSecret } = providerBody();
    expectError(await req('PUT', `/api/projects/${projectA.id}/identity/providers/other`, { body: noSecret }), 422, 'VALIDATION_FAILED', 'Federation.ClientSecretRequired');
    // Replacing without the secret keeps the stored one.
    expectStatus(await req('PUT', `/api/projects/${projectA.id}/identity/providers/acme`, { body: noSecret }), 200, 'replace');
    const anon = await req('GET', `/api/projects/${projectA.id}/identity/providers`, { bearer: null });
    assert.equal(anon.status, 401);
    expectError(await req('DELETE', `/api/projects/${projectA.id}/identity/providers/nope`), 404, 'NOT_FOUND', 'Federation.ProviderNotFound');
  });

  it('start → provider login → callback answers login\'s top-level pair, and the access token works', async () => {
    const s = await start(projectA);
    const u = new URL(s.url);
    assert.equal(u.searchParams.get('code_challenge_method'), 'S256');
    assert.ok((u.searchParams.get('nonce') ?? '').length >= 32);
    const { code, state } = await authorize(op, s.url, 'alice');
    const r = await callback(projectA, { code, state });
    expectStatus(r, 200, 'callback');
    assert.deepEqual(Object.keys(r.body).sort(), ['accessToken', 'expiresAt', 'refreshToken', 'sessionId']);
    const who = await me(projectA, r.body.accessToken);
    assert.equal(who.email, 'alice@example.com');
    assert.equal(who.sessionId, r.body.sessionId);
    // The refresh token is a login's refresh token.
    expectStatus(await req('POST', '/api/identity/tokens/refresh', { bearer: null, project: projectA, body: { refreshToken: r.body.refreshToken } }), 200, 'refresh');
    // Single use: the same state (and code) again is refused.
    expectError(await callback(projectA, { code, state }), 401, 'UNAUTHORIZED', 'Federation.InvalidState');
  });

  it('a state from another project is refused there and still works in its own', async () => {
    const s = await start(projectA);
    const { code, state } = await authorize(op, s.url, 'carol');
    expectError(await callback(projectB, { code, state }), 401, 'UNAUTHORIZED', 'Federation.InvalidState');
    expectError(await callback(projectA, { code, state: `${state}x` }), 401, 'UNAUTHORIZED', 'Federation.InvalidState');
    expectStatus(await callback(projectA, { code, state }), 200, 'own project');
  });

  it('a tampered code is refused (401), never a 5xx', async () => {
    const s = await start(projectA);
    const { code, state } = await authorize(op, s.url, 'dave');
    expectError(await callback(projectA, { code: `${code.slice(0, -2)}zz`, state }), 401, 'UNAUTHORIZED', 'Federation.CodeRejected');
    expectError(await callback(projectA, { code, state: 42 }), 422, 'VALIDATION_FAILED', 'Federation.InvalidBody');
    expectError(await callback(projectA, { code, state, provider: 'missing' }), 404, 'NOT_FOUND', 'Federation.ProviderNotFound');
  });

  it('an ID token whose sub or email carries U+0000 answers 422 naming the claim, never a 5xx', async () => {
    for (const [account, field] of [['nul\u0000sub', 'id_token.sub'], ['lone\uD800sub', 'id_token.sub']] as const) {
      const s = await start(projectA);
      const { code, state } = await authorize(op, s.url, account);
      const r = await callback(projectA, { code, state });
      expectError(r, 422, 'VALIDATION_FAILED', account.includes('\u0000') ? 'Request.NulCharacter' : 'Request.LoneSurrogate');
      assert.equal(r.body.error.field, field);
    }
    // The provider still logs ordinary users in afterwards.
    await federatedLogin(projectA, 'after-nul');
  });

  it('the same provider user gets the same subject; the e-mail alone never links', async () => {
    // A password account with the address the provider will assert.
    const reg = await req('POST', '/api/identity/register', { bearer: null, project: projectA, body: { email: 'erin@example.com', password: 'correct horse 42' } });
    expectStatus(reg, 201, 'register');
    const first = await me(projectA, (await federatedLogin(projectA, 'erin')).accessToken);
    const second = await me(projectA, (await federatedLogin(projectA, 'erin')).accessToken);
    assert.equal(second.subjectId, first.subjectId);
    assert.notEqual(first.subjectId, reg.body.data.subjectId);
    assert.equal(first.email, 'erin@example.com');
    // The password account still logs in as itself.
    const login = await req('POST', '/api/identity/login', { bearer: null, project: projectA, body: { email: 'erin@example.com', password: 'correct horse 42' } });
    expectStatus(login, 200, 'password login');
    assert.equal((await me(projectA, login.body.accessToken)).subjectId, reg.body.data.subjectId);
    // Another project has its own subjects.
    const elsewhere = await me(projectB, (await federatedLogin(projectB, 'erin')).accessToken);
    assert.notEqual(elsewhere.subjectId, first.subjectId);
  });

  it('start refuses an unknown provider and a redirect URI other than the configured one', async () => {
    expectError(await req('POST', '/api/identity/federation/start', { bearer: null, project: projectA, body: { provider: 'nope' } }), 404, 'NOT_FOUND', 'Federation.ProviderNotFound');
    expectError(await req('POST', '/api/identity/federation/start', { bearer: null, project: projectA, body: { provider: 'acme', redirectUri: 'https://evil.example/cb' } }), 422, 'VALIDATION_FAILED', 'Federation.RedirectUriMismatch');
  });

  it('an unreachable provider answers 503 Federation.ProviderUnavailable (retryable), not a crash', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expectStatus(await req('PUT', `/api/projects/${projectB.id}/identity/providers/down`, { body: { ...providerBody(), issuer: `http://127.0.0.1:${port}` } }), 201, 'provider');
    const r = await req('POST', '/api/identity/federation/start', { bearer: null, project: projectB, body: { provider: 'down' } });
    expectError(r, 503, 'UNAVAILABLE', 'Federation.ProviderUnavailable');
    assert.equal(r.body.error.retryable, true);
    expectStatus(await req('DELETE', `/api/projects/${projectB.id}/identity/providers/down`), 204, 'delete');
  });

  it('ID tokens with a bad signature, issuer, audience, nonce or expiry are refused', async () => {
    const d = await discover(op.issuer, true);
    const client = { issuer: op.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
    const { privateKey: own } = await generateKeyPair('RS256');
    const { importJWK } = await import('jose');
    const opKey = await importJWK(op.privateJwk, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Json, key = opKey, kid = 'test-key') => new SignJWT({ nonce: 'n1', ...claims }).setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer(claims.iss ?? op.issuer).setAudience(claims.aud ?? CLIENT_ID).setSubject('mallory').setIssuedAt(now).setExpirationTime(claims.exp ?? now + 300).sign(key);
    // The control: a well-formed token passes.
    assert.equal((await verifyIdToken(d, client, await sign({}), 'n1', true)).sub, 'mallory');
    for (const [what, token, nonce] of [
      ['signature', await sign({}, own), 'n1'],
      ['issuer', await sign({ iss: 'https://other.example' }), 'n1'],
      ['audience', await sign({ aud: 'someone-else' }), 'n1'],
      ['nonce', await sign({}), 'n2'],
      ['expiry', await sign({ exp: now - 120 }), 'n1'],
    ] as const) {
      await assert.rejects(verifyIdToken(d, client, token, nonce, true), (err: unknown) => {
        assert.ok(err instanceof ServiceError, what);
        assert.equal(err.code, 'UNAUTHORIZED', what);
        assert.equal(err.reasonCode, 'Federation.InvalidIdToken', what);
        return true;
      });
    }
  });
});

it('provider URLs on loopback or over http are refused unless FEDERATION_ALLOW_PRIVATE_ISSUERS', async () => {
  await assert.rejects(checkProviderUrl('https://127.0.0.1:8443', false), (err: ServiceError) => err.reasonCode === 'Federation.PrivateIssuer');
  await assert.rejects(checkProviderUrl('https://localhost', false), (err: ServiceError) => err.reasonCode === 'Federation.PrivateIssuer');
  await assert.rejects(checkProviderUrl('http://idp.example.com', false), (err: ServiceError) => err.reasonCode === 'Federation.InvalidUrl');
  assert.equal((await checkProviderUrl('http://127.0.0.1:8443', true)).port, '8443');
});
