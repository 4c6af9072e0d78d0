import { createHmac, timingSafeEqual } from 'node:crypto';

/** Seconds a signed timestamp may differ from now, either way. */
export const SIGNATURE_TOLERANCE_S = 300;

export type SignatureCheck = 'ok' | 'invalid' | 'expired';

/** Hex HMAC-SHA256 of `<t>.<raw body>` with the secret: the `v1` value. */
export function signatureOf(secret: string, timestamp: number | string, raw: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest('hex');
}

/**
 * Verifies `Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]` over the exact
 * raw bytes. Every v1 is compared in constant time (several are allowed while
 * a sender rotates secrets). The timestamp is only judged once a signature
 * matched, so a forger learns nothing beyond "invalid".
 */
export function verifySignature(header: string, secret: string, raw: Buffer, nowS = Math.floor(Date.now() / 1000), toleranceS = SIGNATURE_TOLERANCE_S): SignatureCheck {
  if (header === '' || header.length > 4096) return 'invalid';
  let t: string | null = null;
  const v1: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && t === null) t = v;
    else if (k === 'v1' && /^[0-9a-fA-F]{64}$/.test(v) && v1.length < 8) v1.push(Buffer.from(v, 'hex'));
  }
  if (t === null || !/^\d{1,12}$/.test(t) || v1.length === 0) return 'invalid';
  const expected = Buffer.from(signatureOf(secret, t, raw), 'hex');
  let match = false;
  for (const candidate of v1) if (timingSafeEqual(candidate, expected)) match = true;
  if (!match) return 'invalid';
  return Math.abs(nowS - Number(t)) > toleranceS ? 'expired' : 'ok';
}
