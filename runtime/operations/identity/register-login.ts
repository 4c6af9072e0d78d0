import { randomUUID } from 'node:crypto';
import { ServiceError, unauthorized, validationFailed } from '../../errors/service-error.js';
import {
  claimsOf,
  SESSION_TTL_SECONDS,
  projectSigningKey,
  dummyPasswordHash,
  hashPassword,
  isAcceptablePassword,
  needsRehash,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyPassword,
  revokedSessions,
  newRefreshToken,
  parseRefreshToken,
  refreshTokenHash,
  refreshTokenIssuedBy,
  sameHash,
  signAccessToken,
  successorRefreshToken,
  identityPolicy,
  type LoginRefusal,
} from '../../identity/index.js';
import { single } from '../envelopes.js';
import { noGrants, type AuthStrength, type DeclaredSpec, type OperationContext, type Result } from '../types.js';
import { normalizeEmail } from './email.js';
import { identityContract } from './contract.js';
import { IDENTITY_SCHEMAS as S } from './identity-schemas.js';

type ElevatedStrength = Exclude<AuthStrength, 'password'>;

/** 422 reasons of the credential bodies, reported field by field as the handlers checked them. */
const REGISTER_REASONS = { prefix: 'Identity', order: 'properties', fields: { email: 'Identity.InvalidEmail', password: 'Identity.WeakPassword' } } as const;
const LOGIN_REASONS = { prefix: 'Identity', order: 'properties', fields: { email: 'Identity.InvalidEmail', password: 'Identity.InvalidPassword' } } as const;
const REFRESH_REASONS = { prefix: 'Identity', fields: { refreshToken: 'Identity.InvalidBody' } };

const projectOf = (ctx: OperationContext) => ctx.scope!.project;

/** `settings.identity` of the project, or an empty object. */
function identitySettings(settings: Record<string, unknown>): Record<string, unknown> {
  const identity = settings.identity;
  return typeof identity === 'object' && identity !== null && !Array.isArray(identity) ? identity as Record<string, unknown> : {};
}

/**
 * `POST /api/identity/register` `{ email, password }` → 201 `{ subjectId, email }`.
 * Open unless the project's `settings.identity.registration` is `'closed'`.
 *
 * A taken address answers exactly like a new one (201, same shape, a random
 * subjectId that names no account) after the same hashing work, and creates
 * nothing, so registration cannot be used to learn which addresses have
 * accounts (what Supabase and Auth0 do). A project that prefers the explicit
 * answer sets `settings.identity.revealTakenEmail: true` → 409 `Identity.EmailTaken`.
 */
export const registerSpec: DeclaredSpec = {
  id: 'Identity.Register',
  authn: 'public',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Register a project user (open unless a project setting closes it)',
    routes: [{ method: 'POST', path: 'identity/register' }],
    body: S.IdentityRegisterInput, reasons: REGISTER_REASONS,
    output: { status: 201, body: S.IdentityRegistered },
    errors: [400, 403, 409, 422, 429],
  }),
  async execute(ctx) {
    const project = projectOf(ctx);
    // Closed means self-service sign-up is closed; the platform admin can still provision accounts.
    const settings = identitySettings(project.settings);
    if (settings.registration === 'closed' && ctx.actor.kind !== 'admin') {
      throw new ServiceError('ACCESS_DENIED', 'Identity.RegistrationClosed', 'registration is closed for this project');
    }
    const body = ctx.inv.body as { email: string; password: string };
    // The schema's pattern counts code points; normalizeEmail's bounds count UTF-16 units and have the last word.
    const email = normalizeEmail(body.email);
    if (email === null) throw validationFailed('Identity.InvalidEmail', 'email must be a valid email address', 'email');
    // Length in UTF-16 units, which a JSON Schema `minLength` (code points) cannot say.
    if (!isAcceptablePassword(body.password)) {
      throw validationFailed('Identity.WeakPassword', `password must be a string of ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`, 'password');
    }
    const passwordHash = await hashPassword(body.password);
    const res = await ctx.services.db.query<{ id: string }>(
      `INSERT INTO plinth.identity_subjects (id, project_id, email, password_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_id, email) DO NOTHING RETURNING id::text AS id`,
      [randomUUID(), project.id, email, passwordHash],
    );
    const row = res.rows[0];
    if (row !== undefined) return single(ctx, { subjectId: row.id, email }, 201);
    if (settings.revealTakenEmail === true) throw new ServiceError('CONFLICT', 'Identity.EmailTaken', 'an account with this email already exists', { field: 'email' });
    return single(ctx, { subjectId: randomUUID(), email }, 201);
  },
};

interface TokenPair { accessToken: string; refreshToken: string; expiresAt: string; sessionId: string }

/**
 * Login and refresh answer the token pair at the top level, not under `data`
 * (CONTRACT: Identity; the OAuth token-response habit clients expect). The
 * access token carries the subject's claims as stored now (`claims` column):
 * a claims change reaches the next login or refresh, not tokens already out.
 */
async function tokenAnswer(ctx: OperationContext, key: Uint8Array, subjectId: string, sessionId: string, refreshToken: string, claims: unknown, strength?: ElevatedStrength): Promise<Result> {
  const access = await signAccessToken(key, { projectId: projectOf(ctx).id, subjectId, sessionId, claims: claimsOf(claims), ...(strength === undefined ? {} : { strength }) });
  const body: TokenPair = { accessToken: access.token, refreshToken, expiresAt: access.expiresAt, sessionId };
  return { status: 200, body, headers: { 'Cache-Control': 'no-store' } };
}

const invalidCredentials = (): ServiceError => unauthorized('Identity.InvalidCredentials', 'email or password is incorrect');

/**
 * 429 while an account or client address is locked out (LoginThrottle);
 * retryable once Retry-After passed. The spec's quota headers come along
 * (kind `identity.login.failures.account` or `….address`).
 */
const tooManyAttempts = (r: LoginRefusal): ServiceError => {
  const seconds = Math.max(1, Math.ceil(r.waitMs / 1000));
  return new ServiceError('QUOTA_EXCEEDED', 'Identity.TooManyAttempts', `too many failed logins; retry in ${seconds} s`, {
    retryable: true,
    headers: {
      'Retry-After': String(seconds),
      'X-Service-Quota-Kind': `identity.login.failures.${r.scope}`,
      'X-Service-Quota-Limit': String(r.limit),
      'X-Service-Quota-Used': String(r.limit),
      'X-Service-Quota-Reset': new Date(Date.now() + seconds * 1000).toISOString(),
    },
  });
};

/** `POST /api/identity/login` `{ email, password }` → 200 `{ accessToken, refreshToken, expiresAt, sessionId }`. */
export const loginSpec: DeclaredSpec = {
  id: 'Identity.Login',
  authn: 'public',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Log in with email and password',
    routes: [{ method: 'POST', path: 'identity/login' }],
    body: S.IdentityCredentials, reasons: LOGIN_REASONS,
    output: { status: 200, body: S.IdentityTokens, noStore: true },
    errors: [400, 401, 422, 429],
  }),
  async execute(ctx) {
    const project = projectOf(ctx);
    const body = ctx.inv.body as { email: string; password: string };
    const email = normalizeEmail(body.email);
    // Brute-force protection: a locked account or address answers 429 before any hashing.
    const { throttle } = identityPolicy(ctx.services);
    const account = `${project.id}\u0000${email ?? body.email.trim().toLowerCase().slice(0, 320)}`;
    const address = ctx.inv.clientAddress ?? null;
    const refused = throttle.begin(account, address);
    if (refused !== null) throw tooManyAttempts(refused);
    try {
      return await checkAndOpenSession(ctx, body.password, email, account, address);
    } finally {
      throttle.end(account);
    }
  },
};

/** Checks the password (counting a failure against the throttle) and opens a session. */
async function checkAndOpenSession(ctx: OperationContext, password: string, email: string | null, account: string, address: string | null): Promise<Result> {
  const project = projectOf(ctx);
  const { throttle } = identityPolicy(ctx.services);
  const db = ctx.services.db;
  const found = email === null ? undefined : (await db.query<{ id: string; password_hash: string | null; state: string; claims: unknown }>(
    'SELECT id::text AS id, password_hash, state, claims FROM plinth.identity_subjects WHERE project_id = $1 AND email = $2',
    [project.id, email],
  )).rows[0];
  // Unknown email, or a password no account can have: verify against a dummy hash
  // so the answer takes as long as a wrong password and reads the same.
  const usable = password.length >= 1 && password.length <= PASSWORD_MAX_LENGTH;
  const ok = await verifyPassword(usable ? password : '', found?.password_hash ?? (await dummyPasswordHash()));
  if (found === undefined || found.password_hash === null || !usable || !ok || found.state !== 'active') {
    throttle.failed(account, address);
    throw invalidCredentials();
  }
  throttle.succeeded(account);
  if (needsRehash(found.password_hash)) await rehash(ctx, found.id, found.password_hash, password);
  return openSession(ctx, found.id, found.claims);
}

/**
 * Upgrades a hash made with weaker parameters (N = 2^14 before issue 22) now
 * that the password is known to be right: one more hash on this login only.
 * Compare-and-set on the old hash, so a password changed meanwhile is never
 * overwritten. A refusal (hash gate full) or a failure leaves the old hash,
 * which still verifies: the next login tries again, and this one succeeds.
 */
async function rehash(ctx: OperationContext, subjectId: string, old: string, password: string): Promise<void> {
  try {
    const upgraded = await hashPassword(password);
    await ctx.services.db.query('UPDATE plinth.identity_subjects SET password_hash = $1 WHERE id = $2 AND password_hash = $3', [upgraded, subjectId, old]);
  } catch (err) {
    ctx.services.log.warn('password hash not upgraded; the next login tries again', { correlationId: ctx.inv.correlationId, error: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * Opens a session for an authenticated subject of the scope's project and
 * answers login's top-level token pair (also used by federation/callback, and
 * by a completed step-up challenge, whose access token carries `strength`).
 */
export async function openSession(ctx: OperationContext, subjectId: string, claims?: unknown, strength?: ElevatedStrength): Promise<Result> {
  const project = projectOf(ctx);
  const db = ctx.services.db;
  const key = await projectSigningKey(db, project.id);
  const sessionId = randomUUID();
  const refreshToken = newRefreshToken(key, sessionId);
  await db.query(
    `INSERT INTO plinth.identity_sessions (id, project_id, subject_id, refresh_hash, expires_at)
     VALUES ($1, $2, $3, $4, now() + $5::int * interval '1 second')`,
    [sessionId, project.id, subjectId, refreshTokenHash(refreshToken), SESSION_TTL_SECONDS],
  );
  return tokenAnswer(ctx, key, subjectId, sessionId, refreshToken, claims ?? (await subjectClaims(db, subjectId)), strength);
}

/** The claims stored on a subject (carried by the tokens a session issues). */
async function subjectClaims(db: OperationContext['services']['db'], subjectId: string): Promise<unknown> {
  return (await db.query<{ claims: unknown }>('SELECT claims FROM plinth.identity_subjects WHERE id = $1', [subjectId])).rows[0]?.claims ?? {};
}

const invalidRefresh = (): ServiceError => unauthorized('Identity.InvalidRefreshToken', 'the refresh token is invalid, expired or revoked');

interface SessionRow { subject_id: string; refresh_hash: string; live: boolean; recent: boolean; claims: unknown }

/**
 * `POST /api/identity/tokens/refresh` (and `/refresh`) `{ refreshToken }` →
 * a new access token and a new refresh token; the presented one stops
 * working. Presenting a rotated (already used) refresh token of the session
 * is treated as theft: the session is revoked, so the thief's and the
 * owner's chains both end (the owner logs in again).
 *
 * Grace window (REFRESH_REUSE_GRACE_MS, default 10 s): the token rotated
 * away most recently still answers, with the same successor refresh token,
 * for that long after its rotation, as OAuth servers that rotate refresh
 * tokens allow (Auth0's reuse interval, Okta's grace period). Two concurrent
 * refreshes with one token thus both succeed with one pair; an older token,
 * or the previous one after the window, still revokes the session.
 */
export const refreshSpec: DeclaredSpec = {
  id: 'Identity.Refresh',
  authn: 'public',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Exchange a refresh token for new tokens',
    routes: [{ method: 'POST', path: 'identity/tokens/refresh' }, { method: 'POST', path: 'identity/refresh', summary: 'Alias of /identity/tokens/refresh' }],
    body: S.IdentityRefreshInput, reasons: REFRESH_REASONS,
    output: { status: 200, body: S.IdentityTokens, noStore: true },
    errors: [400, 401, 422, 429],
  }),
  async execute(ctx) {
    const project = projectOf(ctx);
    const presented = (ctx.inv.body as { refreshToken: string }).refreshToken;
    const parsed = parseRefreshToken(presented);
    if (parsed === null) throw invalidRefresh();
    const db = ctx.services.db;
    const key = await projectSigningKey(db, project.id);
    // A token this project never issued for this session: refuse, touch nothing.
    if (!refreshTokenIssuedBy(key, parsed)) throw invalidRefresh();
    const graceMs = identityPolicy(ctx.services).refreshReuseGraceMs;
    const readSession = async (): Promise<SessionRow | undefined> => (await db.query<SessionRow>(
      `SELECT s.subject_id::text AS subject_id, s.refresh_hash, u.claims,
              (s.revoked_at IS NULL AND s.expires_at > now() AND u.state = 'active') AS live,
              (s.last_refreshed_at > now() - $3::int * interval '1 millisecond') AS recent
         FROM plinth.identity_sessions s JOIN plinth.identity_subjects u ON u.id = s.subject_id
        WHERE s.id = $1 AND s.project_id = $2`,
      [parsed.sessionId, project.id, graceMs],
    )).rows[0];
    let session = await readSession();
    if (session === undefined || !session.live) throw invalidRefresh();

    const oldHash = refreshTokenHash(presented);
    const next = successorRefreshToken(key, parsed.sessionId, presented);
    const nextHash = refreshTokenHash(next);
    if (sameHash(oldHash, session.refresh_hash)) {
      // Compare-and-set on the old hash: of two concurrent refreshes with one token, one rotates.
      const rotated = await db.query(
        `UPDATE plinth.identity_sessions SET refresh_hash = $3, last_refreshed_at = now()
          WHERE id = $1 AND project_id = $2 AND refresh_hash = $4 AND revoked_at IS NULL AND expires_at > now()
          RETURNING id`,
        [parsed.sessionId, project.id, nextHash, oldHash],
      );
      if (rotated.rows.length === 1) return tokenAnswer(ctx, key, session.subject_id, parsed.sessionId, next, session.claims);
      // Lost the race: read what the winner wrote.
      session = await readSession();
      if (session === undefined || !session.live) throw invalidRefresh();
    }
    // The token rotated away last (its successor is current), within the grace window: the same pair again.
    if (graceMs > 0 && session.recent && sameHash(nextHash, session.refresh_hash)) {
      return tokenAnswer(ctx, key, session.subject_id, parsed.sessionId, next, session.claims);
    }
    // Issued by us for this session but no longer current: a rotated token came back.
    await db.query('UPDATE plinth.identity_sessions SET revoked_at = now() WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL', [parsed.sessionId, project.id]);
    revokedSessions.add(parsed.sessionId);
    ctx.services.log.warn('refresh token reuse: session revoked', { correlationId: ctx.inv.correlationId, projectId: project.id, sessionId: parsed.sessionId });
    throw invalidRefresh();
  },
};
