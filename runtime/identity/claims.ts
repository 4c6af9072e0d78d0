import { validationFailed } from '../errors/service-error.js';

/**
 * Subject claims: `{ <name>: string }` set by the admin
 * (`PUT /api/IdentityManagement/subjects/{id}/claims`), carried in access
 * tokens issued afterwards (`claims` in the JWT payload) and exposed as
 * `Actor.claims`, where row policies read them as `{ "$actor": "claims.<name>" }`.
 *
 * Names are identifiers (no dots, so `claims.<name>` is unambiguous; no
 * leading underscore, so `__proto__` and friends never become keys). The
 * bounds keep every token under the verifier's 4096-character limit:
 * 50 claims of ≤ 256 characters, ≤ 2048 bytes of JSON in all.
 */
export const CLAIM_NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const MAX_CLAIMS = 50;
export const MAX_CLAIM_VALUE_LENGTH = 256;
export const MAX_CLAIMS_JSON_BYTES = 2048;

export type Claims = Readonly<Record<string, string>>;

export const NO_CLAIMS: Claims = Object.freeze({});

/** The request's `claims` object, checked; a 422 naming `claims` or `claims.<name>` otherwise. */
export function parseClaims(value: unknown): Claims {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationFailed('Identity.InvalidClaims', 'claims must be an object of string values', 'claims');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_CLAIMS) throw validationFailed('Identity.TooManyClaims', `at most ${MAX_CLAIMS} claims`, 'claims');
  for (const [name, v] of entries) {
    const field = `claims.${name.slice(0, 64)}`;
    if (!CLAIM_NAME_RE.test(name)) {
      throw validationFailed('Identity.InvalidClaimName', 'a claim name starts with a letter and has at most 64 letters, digits or underscores', field);
    }
    if (typeof v !== 'string') throw validationFailed('Identity.InvalidClaimValue', 'a claim value must be a string', field);
    if (v.length > MAX_CLAIM_VALUE_LENGTH) throw validationFailed('Identity.InvalidClaimValue', `a claim value has at most ${MAX_CLAIM_VALUE_LENGTH} characters`, field);
  }
  const claims = Object.freeze(Object.fromEntries(entries) as Record<string, string>);
  if (Buffer.byteLength(JSON.stringify(claims), 'utf8') > MAX_CLAIMS_JSON_BYTES) {
    throw validationFailed('Identity.ClaimsTooLarge', `claims take at most ${MAX_CLAIMS_JSON_BYTES} bytes as JSON`, 'claims');
  }
  return claims;
}

/**
 * Claims read back from storage or a verified token payload: only
 * well-formed string entries survive, frozen. Never throws (a token we signed
 * ourselves is trusted; this only guards against shapes we never write).
 */
export function claimsOf(value: unknown): Claims {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return NO_CLAIMS;
  const out: Array<[string, string]> = [];
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (CLAIM_NAME_RE.test(name) && typeof v === 'string' && out.length < MAX_CLAIMS) out.push([name, v]);
  }
  return out.length === 0 ? NO_CLAIMS : Object.freeze(Object.fromEntries(out));
}
