import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dummyPasswordHash, hashPassword, isAcceptablePassword, verifyPassword } from '../../runtime/identity/index.js';

describe('identity passwords', () => {
  it('hashes with scrypt and encodes the parameters', async () => {
    const stored = await hashPassword('correct horse battery');
    const parts = stored.split('$');
    assert.equal(parts.length, 6);
    // OWASP's minimum for scrypt (N = 2^17, r = 8, p = 1) unless PASSWORD_HASH_COST says otherwise.
    assert.deepEqual(parts.slice(0, 4), ['scrypt', '131072', '8', '1']);
    assert.equal(Buffer.from(parts[4]!, 'base64url').length, 16);
    assert.equal(Buffer.from(parts[5]!, 'base64url').length, 64);
    assert.ok(!stored.includes('correct horse'));
  });

  it('verifies the right password and rejects others', async () => {
    const stored = await hashPassword('correct horse battery');
    assert.equal(await verifyPassword('correct horse battery', stored), true);
    assert.equal(await verifyPassword('correct horse batterY', stored), false);
    assert.equal(await verifyPassword('', stored), false);
  });

  it('salts: the same password hashes differently', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    assert.notEqual(a, b);
    assert.equal(await verifyPassword('same password', a), true);
    assert.equal(await verifyPassword('same password', b), true);
  });

  it('accepts a 32-byte key hash with other parameters', async () => {
    const { scryptSync, randomBytes } = await import('node:crypto');
    const salt = randomBytes(16);
    const key = scryptSync('pw-with-32-byte-key', salt, 32, { N: 1024, r: 8, p: 1 });
    const stored = `scrypt$1024$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
    assert.equal(await verifyPassword('pw-with-32-byte-key', stored), true);
    assert.equal(await verifyPassword('other', stored), false);
  });

  it('treats malformed stored hashes as a mismatch, never a throw', async () => {
    for (const bad of ['', 'plain', 'scrypt$1$8$1$aa$bb', 'scrypt$16384$8$1$$', 'bcrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAA', 'scrypt$1073741824$8$1$AAAAAAAAAAAAAAAAAAAAAA$' + 'A'.repeat(86), 'scrypt$16383$8$1$AAAAAAAAAAAAAAAAAAAAAA$' + 'A'.repeat(86)]) {
      assert.equal(await verifyPassword('whatever', bad), false, bad);
    }
  });

  it('password rules: string of 8..256 characters', () => {
    assert.equal(isAcceptablePassword('1234567'), false);
    assert.equal(isAcceptablePassword('12345678'), true);
    assert.equal(isAcceptablePassword('x'.repeat(256)), true);
    assert.equal(isAcceptablePassword('x'.repeat(257)), false);
    assert.equal(isAcceptablePassword(12345678), false);
    assert.equal(isAcceptablePassword(null), false);
  });

  it('the dummy hash is a real hash, made once', async () => {
    const a = await dummyPasswordHash();
    assert.equal(a, await dummyPasswordHash());
    assert.match(a, /^scrypt\$131072\$8\$1\$/); // at the current cost, so an unknown e-mail takes as long as a wrong password
    assert.equal(await verifyPassword('anything', a), false);
  });
});
