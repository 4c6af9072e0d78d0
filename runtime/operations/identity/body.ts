import { validationFailed } from '../../errors/service-error.js';

/**
 * The body as a plain JSON object with only `allowed` keys, or a 422.
 * `block` is the reason-code block (`Identity`, `CapabilityGrant`).
 */
export function objectBody(body: unknown, allowed: readonly string[], block: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationFailed(`${block}.InvalidBody`, 'the request body must be a JSON object');
  }
  const obj = body as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw validationFailed(`${block}.UnknownProperty`, `unknown property '${k.slice(0, 64)}'`, k.slice(0, 64));
  }
  return obj;
}

const EMAIL_RE = /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Lower-cased, trimmed email, or null when it is not a plausible address (≤ 254 chars, local@domain.tld). */
export function normalizeEmail(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const email = value.trim().toLowerCase();
  if (email.length < 3 || email.length > 254) return null;
  const at = email.lastIndexOf('@');
  if (at < 1 || at > 64) return null;
  return EMAIL_RE.test(email) ? email : null;
}
