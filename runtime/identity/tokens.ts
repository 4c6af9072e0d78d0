import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import type { SqlExecutor } from '../../storage/index.js';
import { AUTH_STRENGTHS, type Actor, type AuthStrength } from './actor.js';
import type { TokenVerifier } from './token-verifier.js';
import { claimsOf, type Claims } from './claims.js';
import { ACCESS_TOKEN_TTL_SECONDS, AUTHENTICATED_ROLE, STEP_UP_TTL_SECONDS, TOKEN_ISSUER } from './constants.js';
import { cachedProjectSigningKey, existingProjectSigningKey, UUID_RE } from './keys.js';
import { revokedSessions, type RevokedSessions } from './revocations.js';
import { SessionStatus } from './session-status.js';
import { VerifiedTokens } from './verified-tokens.js';

export { ACCESS_TOKEN_TTL_SECONDS };

/** Longest bearer we bother to parse; real tokens are ~350 characters. */
const MAX_TOKEN_LENGTH = 4096;

export interface AccessTokenClaims {
  projectId: string;
  subjectId: string;
  sessionId: string;
  /** The subject's claims when the token is issued (`claims` in the payload; omitted when empty). */
  claims?: Claims;
  /**
   * A step-up strength (`strength` in the payload, with `strength_exp`, its
   * end). Absent for login and refresh: such a token is `password`.
   */
  strength?: Exclude<AuthStrength, 'password'>;
}

export interface SignedAccessToken {
  token: string;
  /** Expiry as an ISO-8601 string (what login/refresh answer as `expiresAt`). */
  expiresAt: string;
}

/** Signs an access token (JWT HS256) with the project's key. `nowSeconds` is for tests. */
export async function signAccessToken(key: Uint8Array, claims: AccessTokenClaims, nowSeconds = Math.floor(Date.now() / 1000)): Promise<SignedAccessToken> {
  const exp = nowSeconds + ACCESS_TOKEN_TTL_SECONDS;
  const custom: Record<string, unknown> = claims.claims !== undefined && Object.keys(claims.claims).length > 0 ? { claims: claims.claims } : {};
  // The elevation lasts as long as the token (STEP_UP_TTL_SECONDS = the access token TTL); its own
  // expiry claim lets a later, shorter elevation policy end it before the token.
  if (claims.strength !== undefined) Object.assign(custom, { strength: claims.strength, strength_exp: Math.min(exp, nowSeconds + STEP_UP_TTL_SECONDS) });
  const token = await new SignJWT({ sid: claims.sessionId, role: AUTHENTICATED_ROLE, ...custom })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(TOKEN_ISSUER)
    .setAudience(claims.projectId)
    .setSubject(claims.subjectId)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(exp)
    .sign(key);
  return { token, expiresAt: new Date(exp * 1000).toISOString() };
}

/**
 * Verifies project user access tokens. The unverified `aud` names the project
 * whose key must have signed the token; jose then checks signature, `exp`,
 * `iss` and `aud` against that key. Any failure is `null`: never a throw, and
 * the token itself is never logged.
 *
 * The token's session must still be live (SessionStatus: the session row,
 * so a revoked session stays refused after a restart and on every node).
 */
export class JwtTokenVerifier implements TokenVerifier {
  private readonly sessions: SessionStatus;
  private readonly verified = new VerifiedTokens();

  constructor(private readonly db: SqlExecutor, revoked: RevokedSessions = revokedSessions, sessions?: SessionStatus) {
    this.sessions = sessions ?? new SessionStatus(db, revoked);
  }

  /** Whether a session of the project may still authenticate (also used for realtime subscription tokens). */
  sessionLive(projectId: string, sessionId: string): Promise<boolean> {
    return this.sessions.live(projectId, sessionId);
  }

  /**
   * Signature and claims are checked once per token per node (VerifiedTokens);
   * the session is checked on every request.
   */
  async verify(token: string): Promise<Actor | null> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return null;
    const actor = this.verified.get(token, cachedProjectSigningKey) ?? (await this.verifySignature(token));
    if (actor === null) return null;
    return (await this.sessions.live(actor.projectId!, actor.sessionId!)) ? actor : null;
  }

  private async verifySignature(token: string): Promise<Actor | null> {
    try {
      const unverified = decodeJwt(token);
      const aud = unverified.aud;
      if (typeof aud !== 'string' || !UUID_RE.test(aud)) return null;
      const key = await existingProjectSigningKey(this.db, aud);
      if (key === null) return null;
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        audience: aud,
        requiredClaims: ['sub', 'sid', 'exp', 'iat'],
      });
      const { sub, sid, role, exp, claims } = payload as { sub?: unknown; sid?: unknown; role?: unknown; exp?: unknown; claims?: unknown };
      if (typeof sub !== 'string' || !UUID_RE.test(sub)) return null;
      if (typeof sid !== 'string' || !UUID_RE.test(sid)) return null;
      if (role !== AUTHENTICATED_ROLE || typeof exp !== 'number') return null;
      const elevation = strengthOf(payload, Date.now());
      if (elevation === null) return null;
      // Shared by every request that presents this token: frozen so none can change it for the others.
      const actor: Actor = Object.freeze({
        kind: 'user', label: `user:${sub}`, subjectId: sub, projectId: aud, sessionId: sid, roles: Object.freeze([AUTHENTICATED_ROLE]), claims: Object.freeze(claimsOf(claims)),
        strength: elevation.strength,
      });
      // An elevated actor is cached only until its elevation ends; the token is verified afresh after (as `password`).
      this.verified.put(token, actor, Math.min(exp * 1000, elevation.untilMs), key);
      return actor;
    } catch {
      return null;
    }
  }
}

/**
 * The strength a verified payload carries: `password` without a `strength`
 * claim or once `strength_exp` passed; null (the token is refused) for a
 * strength claim we never write.
 */
export function strengthOf(payload: Record<string, unknown>, nowMs: number): { strength: AuthStrength; untilMs: number } | null {
  const { strength, strength_exp: until } = payload;
  if (strength === undefined) return { strength: 'password', untilMs: Infinity };
  if (typeof strength !== 'string' || strength === 'password' || !(AUTH_STRENGTHS as readonly string[]).includes(strength) || typeof until !== 'number') return null;
  if (until * 1000 <= nowMs) return { strength: 'password', untilMs: Infinity };
  return { strength: strength as AuthStrength, untilMs: until * 1000 };
}

// ---------------------------------------------------------------------------
// Refresh tokens: `<sessionId>.<secret>`, secret = 32 random bytes followed by
// a 16-byte tag (HMAC of session id and random part under a key derived from
// the project key), base64url. Only sha256(token) is stored. The tag lets the
// refresh path tell a token this project really issued for the session (an
// old, rotated one: reuse → revoke the session) from a forged one (just 401,
// so knowing a session id is not enough to kill someone's session).
// ---------------------------------------------------------------------------

const REFRESH_RANDOM_BYTES = 32;
const REFRESH_TAG_BYTES = 16;
const LOWER_UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ParsedRefreshToken {
  sessionId: string;
  random: Buffer;
  tag: Buffer;
}

const refreshTagKey = (projectKey: Uint8Array): Buffer => createHmac('sha256', projectKey).update('plinth/refresh-token-tag/v1').digest();

function refreshTag(projectKey: Uint8Array, sessionId: string, random: Buffer): Buffer {
  return createHmac('sha256', refreshTagKey(projectKey)).update(sessionId).update(random).digest().subarray(0, REFRESH_TAG_BYTES);
}

export function newRefreshToken(projectKey: Uint8Array, sessionId: string): string {
  const random = randomBytes(REFRESH_RANDOM_BYTES);
  const secret = Buffer.concat([random, refreshTag(projectKey, sessionId, random)]);
  return `${sessionId}.${secret.toString('base64url')}`;
}

const successorKey = (projectKey: Uint8Array): Buffer => createHmac('sha256', projectKey).update('plinth/refresh-token-successor/v1').digest();

/**
 * The refresh token that replaces `presented` at rotation. Derived, not
 * random: HMAC of the presented token under a key only the server holds. So
 * two concurrent refreshes with one token (a client's retry, two tabs) compute
 * the same successor, and the loser of the race, inside the grace window, can
 * answer the very pair the winner got (see Identity.Refresh). Without the
 * project key nobody can compute a successor.
 */
export function successorRefreshToken(projectKey: Uint8Array, sessionId: string, presented: string): string {
  const random = createHmac('sha256', successorKey(projectKey)).update(presented).digest().subarray(0, REFRESH_RANDOM_BYTES);
  const secret = Buffer.concat([random, refreshTag(projectKey, sessionId, random)]);
  return `${sessionId}.${secret.toString('base64url')}`;
}

/** Splits a presented refresh token; null when it is not of our form. */
export function parseRefreshToken(token: unknown): ParsedRefreshToken | null {
  if (typeof token !== 'string' || token.length > 200) return null;
  const dot = token.indexOf('.');
  if (dot < 0) return null;
  const sessionId = token.slice(0, dot);
  const secretText = token.slice(dot + 1);
  // Lower-case only: the hash covers the exact string, so one token has exactly one spelling.
  if (!LOWER_UUID_RE.test(sessionId) || !/^[A-Za-z0-9_-]+$/.test(secretText)) return null;
  const secret = Buffer.from(secretText, 'base64url');
  if (secret.length !== REFRESH_RANDOM_BYTES + REFRESH_TAG_BYTES || secret.toString('base64url') !== secretText) return null;
  return { sessionId, random: secret.subarray(0, REFRESH_RANDOM_BYTES), tag: secret.subarray(REFRESH_RANDOM_BYTES) };
}

/** Whether this project issued the token for its session (any generation, current or rotated). */
export function refreshTokenIssuedBy(projectKey: Uint8Array, parsed: ParsedRefreshToken): boolean {
  return timingSafeEqual(refreshTag(projectKey, parsed.sessionId, parsed.random), parsed.tag);
}

/** What `identity_sessions.refresh_hash` stores: sha256 hex of the whole token. */
export function refreshTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison of two stored-form hashes. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
