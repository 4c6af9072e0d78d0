/**
 * Password hashes at OWASP's scrypt minimum (N = 2^17, r = 8, p = 1) by
 * default, and a hash made with the old parameters (N = 2^14) is upgraded on
 * the next successful login (issue 22, finding 10), on both backends.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { InvalidConfig, parseConfig } from '../../node/config.js';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const PASSWORD = 'an old account password';

/** A stored hash exactly as the platform wrote them before issue 22. */
function oldFormatHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 64, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt$16384$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

describe('PASSWORD_HASH_COST', () => {
  it('defaults to 17 (OWASP) and refuses anything below 14 or above 20', () => {
    assert.equal(parseConfig({}).passwordHashCost, 17);
    assert.equal(parseConfig({ PASSWORD_HASH_COST: '14' }).passwordHashCost, 14);
    assert.throws(() => parseConfig({ PASSWORD_HASH_COST: '13' }), InvalidConfig);
    assert.throws(() => parseConfig({ PASSWORD_HASH_COST: '21' }), InvalidConfig);
    // 128 MiB per running hash: the gate's concurrency is capped so that stays bounded.
    assert.throws(() => parseConfig({ PASSWORD_HASH_CONCURRENCY: '17' }), InvalidConfig);
    // The queue defaults to 16 per running hash (the node computes it); an explicit value is kept.
    assert.equal(parseConfig({}).passwordHashQueue, null);
    assert.equal(parseConfig({ PASSWORD_HASH_QUEUE: '64' }).passwordHashQueue, 64);
  });
});

forEachBackend('password hashes are upgraded on login', (backend: Backend) => {
  let server: TestServer;
  let anon: Client;

  const storedHash = async (email: string): Promise<string> =>
    (await server.node.services.db.query<{ h: string }>('SELECT password_hash AS h FROM plinth.identity_subjects WHERE email = $1', [email])).rows[0]!.h;

  before(async () => {
    // The default cost, not the test suites' 2^14.
    server = await startServer({ backend, env: { PASSWORD_HASH_COST: '17' } });
    anon = (await bootstrapProject(server.url, server.adminToken)).client.with({ token: null });
  });
  after(async () => {
    await server?.close();
  });

  it('registration stores scrypt$131072$8$1$…', async () => {
    const r = await anon.post('/api/identity/register', { email: 'new@x.io', password: PASSWORD });
    assert.equal(r.status, 201, r.text);
    assert.match(await storedHash('new@x.io'), /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
  });

  it('an old N = 2^14 hash still logs in, is rehashed to 2^17, and the new hash logs in', async () => {
    const email = 'old@x.io';
    assert.equal((await anon.post('/api/identity/register', { email, password: 'placeholder password' })).status, 201);
    const old = oldFormatHash(PASSWORD);
    await server.node.services.db.query('UPDATE plinth.identity_subjects SET password_hash = $1 WHERE email = $2', [old, email]);
    // A wrong password upgrades nothing.
    assert.equal((await anon.post('/api/identity/login', { email, password: 'not the password' })).status, 401);
    assert.equal(await storedHash(email), old);
    const first = await anon.post('/api/identity/login', { email, password: PASSWORD });
    assert.equal(first.status, 200, first.text);
    const upgraded = await storedHash(email);
    assert.match(upgraded, /^scrypt\$131072\$8\$1\$/);
    const second = await anon.post('/api/identity/login', { email, password: PASSWORD });
    assert.equal(second.status, 200, second.text);
    // Already current: not hashed again.
    assert.equal(await storedHash(email), upgraded);
    assert.equal((await anon.post('/api/identity/login', { email, password: 'not the password' })).status, 401);
  });
});
