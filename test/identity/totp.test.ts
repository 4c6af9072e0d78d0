/** TOTP against the RFC 6238 Appendix B vectors, base32 against RFC 4648, and the acceptance rules. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { base32Decode, base32Encode, hotp, matchTotp, newTotpSecret, otpauthUrl, totpStep } from '../../runtime/identity/index.js';

const SEEDS = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};

// RFC 6238 Appendix B: [time, sha1, sha256, sha512], 8 digits, 30-second steps.
const VECTORS: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it('reproduces every Appendix B vector (SHA-1, SHA-256, SHA-512)', () => {
    for (const [t, sha1, sha256, sha512] of VECTORS) {
      const step = totpStep(t * 1000);
      assert.equal(hotp(SEEDS.sha1, step, 8, 'sha1'), sha1, `sha1 at ${t}`);
      assert.equal(hotp(SEEDS.sha256, step, 8, 'sha256'), sha256, `sha256 at ${t}`);
      assert.equal(hotp(SEEDS.sha512, step, 8, 'sha512'), sha512, `sha512 at ${t}`);
    }
  });

  it('6-digit codes are the last six digits of the 8-digit vectors (same truncation, mod 10^6)', () => {
    for (const [t, sha1] of VECTORS) assert.equal(hotp(SEEDS.sha1, totpStep(t * 1000)), sha1.slice(2));
  });

  it('RFC 4226 Appendix D HOTP values', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => assert.equal(hotp(SEEDS.sha1, counter), code));
  });

  it('base32 matches RFC 4648 and round-trips random secrets', () => {
    const cases: Array<[string, string]> = [['', ''], ['f', 'MY'], ['fo', 'MZXQ'], ['foo', 'MZXW6'], ['foob', 'MZXW6YQ'], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI']];
    for (const [plain, b32] of cases) {
      assert.equal(base32Encode(Buffer.from(plain)), b32);
      assert.equal(base32Decode(`${b32}======`.slice(0, Math.ceil(b32.length / 8) * 8 || 0))?.toString(), plain);
      assert.equal(base32Decode(b32.toLowerCase())?.toString(), plain);
    }
    assert.equal(base32Decode('MZ1W'), null, '1 is not base32');
    const secret = newTotpSecret();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.ok(base32Decode(secret)!.length * 8 >= 128, 'at least 128 bits');
    assert.notEqual(newTotpSecret(), secret);
  });

  it('accepts the current step and one either side, refuses two away, replays and older steps', () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    const at = (s: number) => hotp(SEEDS.sha1, s);
    assert.equal(matchTotp(SEEDS.sha1, at(step), now, null), step);
    assert.equal(matchTotp(SEEDS.sha1, at(step - 1), now, null), step - 1);
    assert.equal(matchTotp(SEEDS.sha1, at(step + 1), now, null), step + 1);
    assert.equal(matchTotp(SEEDS.sha1, at(step - 2), now, null), null);
    assert.equal(matchTotp(SEEDS.sha1, at(step + 2), now, null), null);
    // single use: a step at or below the last used one is refused
    assert.equal(matchTotp(SEEDS.sha1, at(step), now, step), null);
    assert.equal(matchTotp(SEEDS.sha1, at(step - 1), now, step), null);
    assert.equal(matchTotp(SEEDS.sha1, at(step + 1), now, step), step + 1);
    for (const bad of ['', '12345', '1234567', 'abcdef', ' 12345', '12345\n']) assert.equal(matchTotp(SEEDS.sha1, bad, now, null), null);
  });

  it('otpauth URL carries the secret and the parameters authenticator apps read', () => {
    const url = new URL(otpauthUrl('JBSWY3DPEHPK3PXP', 'My Project', 'a@example.com'));
    assert.equal(url.protocol, 'otpauth:');
    assert.ok(url.href.startsWith('otpauth://totp/My%20Project:a%40example.com?'));
    assert.equal(url.searchParams.get('secret'), 'JBSWY3DPEHPK3PXP');
    assert.equal(url.searchParams.get('issuer'), 'My Project');
    assert.equal(url.searchParams.get('algorithm'), 'SHA1');
    assert.equal(url.searchParams.get('digits'), '6');
    assert.equal(url.searchParams.get('period'), '30');
  });
});
