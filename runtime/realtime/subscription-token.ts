import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SqlExecutor } from '../../storage/index.js';
import { claimsOf, existingProjectSigningKey, projectSigningKey, UUID_RE } from '../identity/index.js';
import { PLATFORM_ADMIN, type Actor } from '../operations/types.js';
import type { TokenVerifier } from '../services.js';

/**
 * Short-lived realtime subscription token: `rt1.<payload>.<mac>`, payload
 * base64url JSON `{ t, p, k, s, sid, r, exp }`, mac HMAC-SHA256 under the
 * project's signing key (shared by every node through the database, so any
 * node verifies it). Bound to one tenant+project; good for 60 s and only on
 * the realtime handshake.
 */
export const SUBSCRIPTION_TOKEN_TTL_SECONDS = 60;
const PREFIX = 'rt1.';

interface Payload {
  t: string;
  p: string;
  k: 'admin' | 'user';
  s: string | null;
  sid: string | null;
  r: string[];
  /** The actor's claims (absent in tokens minted before claims existed). */
  c?: Record<string, string>;
  exp: number;
}

const mac = (key: Uint8Array, body: string): Buffer => createHmac('sha256', key).update(`${PREFIX}${body}`).digest();

export const isSubscriptionToken = (token: string): boolean => token.startsWith(PREFIX);

export async function mintSubscriptionToken(db: SqlExecutor, tenantId: string, projectId: string, actor: Actor, nowSeconds = Math.floor(Date.now() / 1000)): Promise<{ token: string; expiresAt: string }> {
  const key = await projectSigningKey(db, projectId);
  const exp = nowSeconds + SUBSCRIPTION_TOKEN_TTL_SECONDS;
  const payload: Payload = { t: tenantId, p: projectId, k: actor.kind === 'admin' ? 'admin' : 'user', s: actor.subjectId, sid: actor.sessionId, r: [...actor.roles], c: { ...actor.claims }, exp };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return { token: `${PREFIX}${body}.${mac(key, body).toString('base64url')}`, expiresAt: new Date(exp * 1000).toISOString() };
}

/** Verified token: the actor and the scope it is bound to; null when invalid or expired. */
export async function verifySubscriptionToken(db: SqlExecutor, token: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<{ actor: Actor; tenantId: string; projectId: string } | null> {
  try {
    if (!isSubscriptionToken(token) || token.length > 4096) return null;
    const [body, sig] = token.slice(PREFIX.length).split('.');
    if (body === undefined || sig === undefined) return null;
    const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    if (typeof p.p !== 'string' || !UUID_RE.test(p.p) || typeof p.t !== 'string' || typeof p.exp !== 'number' || p.exp < nowSeconds) return null;
    const key = await existingProjectSigningKey(db, p.p);
    if (key === null) return null;
    const expected = mac(key, body);
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const actor: Actor = p.k === 'admin'
      ? PLATFORM_ADMIN
      : { kind: 'user', label: `user:${p.s}`, subjectId: p.s, projectId: p.p, sessionId: p.sid, roles: Array.isArray(p.r) ? p.r.filter((x) => typeof x === 'string') : [], claims: claimsOf(p.c) };
    return { actor, tenantId: p.t, projectId: p.p };
  } catch {
    return null;
  }
}

/** A verifier for realtime connections only: subscription tokens, then the node's usual verifier. */
export function realtimeTokenVerifier(db: SqlExecutor, inner: TokenVerifier): TokenVerifier {
  return {
    verify: async (token) => {
      if (!isSubscriptionToken(token)) return inner.verify(token);
      const v = await verifySubscriptionToken(db, token);
      if (v === null) return null;
      // A token minted by a session that was revoked since is refused like the session's access tokens.
      const sid = v.actor.sessionId;
      if (sid !== null && inner.sessionLive !== undefined && !(await inner.sessionLive(v.projectId, sid))) return null;
      return v.actor;
    },
  };
}
