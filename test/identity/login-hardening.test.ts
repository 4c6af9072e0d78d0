/**
 * Login and refresh under pressure, against a real server on both backends:
 * failed logins lock the account and then the client address (429 with
 * Retry-After, retryable), a login flood does not stall other requests, and
 * two concurrent refreshes with one token both succeed within the grace
 * window while reuse after it still revokes the session.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, type Client, type Reply } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { hashPassword } from '../../runtime/identity/index.js';

const PASSWORD = 'correct horse 42';
const GRACE_MS = 1500;
const ADDRESS_LIMIT = 12;

forEachBackend('login hardening', (backend: Backend) => {
  let server: TestServer;
  let anon: Client;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend, env: { REFRESH_REUSE_GRACE_MS: String(GRACE_MS), LOGIN_MAX_FAILURES_PER_ADDRESS: String(ADDRESS_LIMIT) } });
    const p = await bootstrapProject(server.url, server.adminToken, `lh${randomUUID().slice(0, 8)}`);
    admin = p.client;
    anon = p.client.with({ token: null });
  });
  after(async () => { await server?.close(); });

  const register = async (): Promise<string> => {
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: PASSWORD }), 201);
    return email;
  };
  const login = (email: string, password = PASSWORD): Promise<Reply> => anon.post('/api/identity/login', { email, password });
  const expectThrottled = (r: Reply): void => {
    const e = expectError(r, 429, 'QUOTA_EXCEEDED', 'Identity.TooManyAttempts');
    assert.equal(e.retryable, true);
    const after = Number(r.headers.get('retry-after'));
    assert.ok(Number.isInteger(after) && after >= 1, `Retry-After: ${r.headers.get('retry-after')}`);
    assert.match(r.headers.get('x-service-quota-kind') ?? '', /^identity\.login\.failures\.(account|address)$/);
  };

  it('5 wrong passwords lock the account: 429 with Retry-After, the right password too; other accounts unaffected', async () => {
    const email = await register();
    for (let i = 0; i < 5; i++) expectError(await login(email, 'wrong password'), 401, 'UNAUTHORIZED', 'Identity.InvalidCredentials');
    expectThrottled(await login(email, 'wrong password'));
    const right = await login(email);
    expectThrottled(right);
    assert.ok(Number(right.headers.get('retry-after')) <= 60);
    // an address that does not exist locks the same way (the lockout tells nothing about accounts)
    const ghost = `${randomUUID()}@example.com`;
    for (let i = 0; i < 5; i++) expectStatus(await login(ghost, 'wrong password'), 401);
    expectThrottled(await login(ghost));
    expectStatus(await login(await register()), 200);
  });

  it('a login flood hashes off the event loop: a concurrent authenticated request stays fast', async () => {
    const email = await register();
    const token = (await login(email)).body.accessToken as string;
    const user = anon.with({ token });
    expectStatus(await user.get('/api/identity/me'), 200);
    // The serial cost of one hash on this machine, measured the same way the server hashes.
    const t0 = performance.now();
    await hashPassword('measure me please');
    const oneHash = performance.now() - t0;
    // 20 accounts: concurrent logins to one account count toward its lockout while in flight.
    const accounts = await Promise.all(Array.from({ length: 20 }, () => register()));
    const flood = accounts.map((a) => login(a));
    await new Promise((r) => setTimeout(r, 20));
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      expectStatus(await user.get('/api/identity/me'), 200);
      latencies.push(performance.now() - s);
    }
    for (const r of await Promise.all(flood)) assert.ok(r.status === 200 || r.status === 503, `flood login: ${r.status} ${r.text}`);
    const worst = Math.max(...latencies);
    // 20 hashes in series take 20 × oneHash; a request stuck behind them waits for several of them.
    assert.ok(worst < Math.max(3 * oneHash, 50), `authenticated request took ${worst.toFixed(0)} ms during the flood (one hash: ${oneHash.toFixed(0)} ms; latencies ${latencies.map((l) => l.toFixed(0)).join(', ')})`);
  });

  it('two concurrent refreshes with one token both succeed with the same pair; the session lives on', async () => {
    const first = (await login(await register())).body;
    const [a, b] = await Promise.all([
      anon.post('/api/identity/tokens/refresh', { refreshToken: first.refreshToken }),
      anon.post('/api/identity/tokens/refresh', { refreshToken: first.refreshToken }),
    ]);
    expectStatus(a, 200);
    expectStatus(b, 200);
    assert.equal(a.body.refreshToken, b.body.refreshToken);
    assert.equal(a.body.sessionId, first.sessionId);
    expectStatus(await anon.with({ token: b.body.accessToken }).get('/api/identity/me'), 200);
    // a retry inside the window gets the same pair again
    const retry = await anon.post('/api/identity/tokens/refresh', { refreshToken: first.refreshToken });
    expectStatus(retry, 200);
    assert.equal(retry.body.refreshToken, a.body.refreshToken);
    const next = await anon.post('/api/identity/tokens/refresh', { refreshToken: a.body.refreshToken });
    expectStatus(next, 200);
    expectStatus(await anon.with({ token: next.body.accessToken }).get('/api/identity/me'), 200);
  });

  it('reuse of a rotated token after the grace window revokes the session', async () => {
    const first = (await login(await register())).body;
    const r1 = await anon.post('/api/identity/tokens/refresh', { refreshToken: first.refreshToken });
    expectStatus(r1, 200);
    await new Promise((r) => setTimeout(r, GRACE_MS + 300));
    expectError(await anon.post('/api/identity/tokens/refresh', { refreshToken: first.refreshToken }), 401, 'UNAUTHORIZED', 'Identity.InvalidRefreshToken');
    expectError(await anon.post('/api/identity/tokens/refresh', { refreshToken: r1.body.refreshToken }), 401, 'UNAUTHORIZED', 'Identity.InvalidRefreshToken');
    expectError(await anon.with({ token: r1.body.accessToken }).get('/api/identity/me'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
  });

  // Last: it blocks this client address for the rest of the window.
  it(`${ADDRESS_LIMIT} failures from one address block it, even for an account with no failures`, async () => {
    const fresh = await register();
    let blocked: Reply | null = null;
    for (let i = 0; i < ADDRESS_LIMIT && blocked === null; i++) {
      const r = await login(`${randomUUID()}@example.com`, 'wrong password');
      if (r.status === 429) blocked = r;
      else expectStatus(r, 401);
    }
    blocked ??= await login(`${randomUUID()}@example.com`, 'wrong password');
    expectThrottled(blocked);
    expectThrottled(await login(fresh));
    // other requests from the address are not affected
    expectStatus(await admin.get('/api/identity/me'), 200);
  });
});
