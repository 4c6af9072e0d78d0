/** verifySignature against headers made independently by the `stripe` package. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { signatureOf, verifySignature } from '../../runtime/webhooks/inbound/signature.js';

const stripe = new Stripe('sk_test_unused');
const SECRET = 'whsec_0123456789abcdef0123456789abcdef';
const NOW = 1_800_000_000;
const body = Buffer.from('{"type":"a.b","id":"1","data":{"x":"ü"}}');
const header = (t = NOW, secret = SECRET, payload = body.toString('utf8')): string => stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: t });

describe('inbound webhook signature', () => {
  it('accepts the stripe-made header over the exact bytes', () => {
    assert.equal(verifySignature(header(), SECRET, body, NOW), 'ok');
    assert.equal(header(), `t=${NOW},v1=${signatureOf(SECRET, NOW, body)}`);
  });
  it('says invalid for a changed byte, a wrong secret, or a malformed header', () => {
    assert.equal(verifySignature(header(), SECRET, Buffer.concat([body, Buffer.from(' ')]), NOW), 'invalid');
    assert.equal(verifySignature(header(NOW, `${SECRET}x`), SECRET, body, NOW), 'invalid');
    for (const h of ['', 'v1=' + '0'.repeat(64), `t=${NOW}`, `t=${NOW},v1=xyz`, `t=-5,v1=${signatureOf(SECRET, NOW, body)}`, `t=${NOW},v0=${signatureOf(SECRET, NOW, body)}`]) {
      assert.equal(verifySignature(h, SECRET, body, NOW), 'invalid', h);
    }
  });
  it('says expired only for a valid signature outside ±300 s', () => {
    assert.equal(verifySignature(header(NOW - 300), SECRET, body, NOW), 'ok');
    assert.equal(verifySignature(header(NOW - 301), SECRET, body, NOW), 'expired');
    assert.equal(verifySignature(header(NOW + 301), SECRET, body, NOW), 'expired');
    assert.equal(verifySignature(`t=${NOW - 301},v1=${'0'.repeat(64)}`, SECRET, body, NOW), 'invalid');
  });
  it('accepts any one of several v1 values', () => {
    const [t, v1] = header().split(',');
    assert.equal(verifySignature(`${t},v1=${'a'.repeat(64)},${v1}`, SECRET, body, NOW), 'ok');
  });
});
