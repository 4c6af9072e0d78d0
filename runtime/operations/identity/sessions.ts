import { notFound, unauthorized, validationFailed } from '../../errors/service-error.js';
import { UUID_RE, revokedSessions } from '../../identity/index.js';
import { noContent, single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { identityContract } from './contract.js';
import { IDENTITY_SCHEMAS as S } from './identity-schemas.js';

/** Most recent sessions listed per caller. */
const SESSION_LIST_LIMIT = 100;

/** The caller's subject id, or a 422 for the admin credential (which has no sessions). */
export function userSubject(ctx: OperationContext): string {
  if (ctx.actor.kind !== 'user' || ctx.actor.subjectId === null) {
    throw validationFailed('Identity.UserTokenRequired', 'this operation needs a project user token, not the admin credential');
  }
  return ctx.actor.subjectId;
}

/** `GET /api/identity/me` → the actor record. */
export const meSpec: DeclaredSpec = {
  id: 'Identity.Me',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'The calling actor',
    routes: [{ method: 'GET', path: 'identity/me' }],
    output: { status: 200, body: S.IdentityMe },
    errors: [400, 401],
  }),
  async execute(ctx) {
    const { actor } = ctx;
    if (actor.kind !== 'user') return single(ctx, { kind: actor.kind, label: actor.label, roles: [...actor.roles] });
    const project = ctx.scope!.project;
    // A federated subject's address is the e-mail claim on its most recently used link.
    const row = (await ctx.services.db.query<{ email: string | null }>(
      `SELECT coalesce(u.email, (SELECT l.email FROM plinth.identity_federated_links l WHERE l.subject_id = u.id ORDER BY l.last_login_at DESC LIMIT 1)) AS email
         FROM plinth.identity_subjects u WHERE u.id = $1 AND u.project_id = $2 AND u.state = 'active'`,
      [actor.subjectId, project.id],
    )).rows[0];
    if (row === undefined) throw unauthorized('Identity.SubjectNotFound', 'the account behind this token no longer exists');
    return single(ctx, {
      kind: 'user', subjectId: actor.subjectId, email: row.email, projectId: project.id, roles: [...actor.roles], sessionId: actor.sessionId,
      // How strongly this token was authenticated: `password`, or the step-up strength while it lasts.
      strength: actor.strength ?? 'password',
    });
  },
};

interface SessionRow { id: string; created_at: string; last_refreshed_at: string; expires_at: string; revoked_at: string | null }

/** `GET /api/identity/sessions` → the caller's sessions, newest first. */
export const listSessionsSpec: DeclaredSpec = {
  id: 'Identity.Sessions.List',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Sessions of the calling subject',
    routes: [{ method: 'GET', path: 'identity/sessions' }],
    output: { status: 200, body: S.IdentitySessionList },
    errors: [400, 401],
  }),
  async execute(ctx) {
    const subjectId = userSubject(ctx);
    const res = await ctx.services.db.query<SessionRow>(
      `SELECT id::text AS id, created_at, last_refreshed_at, expires_at, revoked_at
         FROM plinth.identity_sessions WHERE project_id = $1 AND subject_id = $2
        ORDER BY created_at DESC, id LIMIT ${SESSION_LIST_LIMIT}`,
      [ctx.scope!.project.id, subjectId],
    );
    return single(ctx, res.rows.map((r) => ({
      id: r.id,
      createdAt: r.created_at,
      lastRefreshedAt: r.last_refreshed_at,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
      current: r.id === ctx.actor.sessionId,
    })));
  },
};

const sessionNotFound = () => notFound('Identity.SessionNotFound', 'session not found');

/**
 * `DELETE /api/identity/sessions/{sessionId}` → 204. A user revokes only its
 * own sessions (anyone else's answers 404, as an unknown id does); the
 * platform admin may revoke any session of the project. Idempotent.
 */
export const revokeSessionSpec: DeclaredSpec = {
  id: 'Identity.Sessions.Revoke',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Revoke a session of the calling subject',
    routes: [{ method: 'DELETE', path: 'identity/sessions/:sessionId' }],
    params: { sessionId: { description: 'Session id.' } },
    output: { status: 204 },
    errors: [400, 401, 403, 404],
  }),
  async execute(ctx) {
    const sessionId = ctx.inv.params.sessionId ?? '';
    if (!UUID_RE.test(sessionId)) throw sessionNotFound();
    const admin = ctx.actor.kind === 'admin';
    const params: unknown[] = [sessionId.toLowerCase(), ctx.scope!.project.id];
    if (!admin) params.push(userSubject(ctx));
    const res = await ctx.services.db.query<{ id: string }>(
      `UPDATE plinth.identity_sessions SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = $1 AND project_id = $2${admin ? '' : ' AND subject_id = $3'} RETURNING id::text AS id`,
      params,
    );
    if (res.rows.length === 0) throw sessionNotFound();
    revokedSessions.add(res.rows[0]!.id);
    return noContent;
  },
};
