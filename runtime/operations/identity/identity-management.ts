import { notFound, validationFailed, type ServiceError } from '../../errors/service-error.js';
import { claimsOf, parseClaims, AUTHENTICATED_ROLE, UUID_RE, revokedSessions } from '../../identity/index.js';
import { list, single } from '../envelopes.js';
import { logPageSize } from '../log-paging.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec, type Result } from '../types.js';
import type { OperationContract, TagDecl } from '../contract/index.js';
import { normalizeEmail } from './email.js';
import { identityContract } from './contract.js';
import { MANAGEMENT_SCHEMAS as S, SUBJECT_STATE } from './management-schemas.js';

/**
 * `/api/IdentityManagement`: the platform admin manages a project's subjects
 * (scope headers name the project; a subject of another project is 404).
 * A project user token gets 403 ACCESS_DENIED `Access.AdminRequired` (stage 1).
 * Records never carry the password hash.
 */
const TAG: TagDecl = { name: 'IdentityManagement', description: 'The platform admin manages a project\'s subjects: claims, deactivation, memberships (docs/identity.md).' };
/** 401 no credential; 403 a user token; 404 scope or subject; 422 bad input or missing scope headers. */
const ERRORS = [401, 403, 404, 422];
const SUBJECT_ID = { id: { description: 'Subject id (`subjectId` of register).', schema: { type: 'string', format: 'uuid' } } };
const EMAIL_QUERY = { email: { description: 'Only the subject with this address (compared case-insensitively).', schema: { type: 'string', format: 'email' } } };
const STATE_QUERY = { state: { description: 'Only subjects in this state.', schema: SUBJECT_STATE } };

type ManagementContract = Omit<OperationContract, 'tag' | 'metering' | 'stability' | 'errors' | 'routes'> & { path: string; method: 'GET' | 'PUT' | 'POST' };

const adminOp = (id: string, c: ManagementContract, execute: OperationSpec['execute']): DeclaredSpec => {
  const { path, method, ...rest } = c;
  return { id, authn: 'admin', scope: 'project', grants: noGrants, contract: identityContract({ tag: TAG, routes: [{ method, path: `IdentityManagement/${path}` }], errors: ERRORS, ...rest }), execute };
};

interface SubjectRow { id: string; email: string; state: string; claims: unknown; created_at: string; deactivated_at: string | null }

const COLUMNS = 'id::text AS id, email, state, claims, created_at, deactivated_at';

const record = (r: SubjectRow) => ({
  subjectId: r.id, email: r.email, state: r.state, claims: claimsOf(r.claims), createdAt: r.created_at, deactivatedAt: r.deactivated_at,
});

const subjectNotFound = (): ServiceError => notFound('Identity.SubjectNotFound', 'subject not found');

/** The path's subject id (lower case), or 404 as an unknown subject. */
function pathSubject(ctx: OperationContext): string {
  const id = ctx.inv.params.id ?? '';
  if (!UUID_RE.test(id)) throw subjectNotFound();
  return id.toLowerCase();
}

// ---------------------------------------------------------------------------
// Paging: keyset on (created_at, id). The cursor is the base64url of
// `[createdAt, id, filterKey]`; a cursor of one filter is refused on another
// (422 Query.InvalidCursor), as entity lists do.
// ---------------------------------------------------------------------------

interface Filter { email: string | null; state: 'active' | 'deactivated' | null; subjectId: string | null }

function parseFilter(ctx: OperationContext, withSubject: boolean): Filter {
  const q = ctx.inv.query;
  const rawEmail = q.get('email');
  let email: string | null = null;
  if (rawEmail !== undefined && rawEmail !== '') {
    email = normalizeEmail(rawEmail);
    if (email === null) throw validationFailed('Query.InvalidEmail', 'email must be an email address', 'email');
  }
  const rawState = q.get('state');
  if (rawState !== undefined && rawState !== '' && rawState !== 'active' && rawState !== 'deactivated') {
    throw validationFailed('Query.InvalidState', "state must be 'active' or 'deactivated'", 'state');
  }
  const state = rawState === 'active' || rawState === 'deactivated' ? rawState : null;
  let subjectId: string | null = null;
  const rawSubject = withSubject ? q.get('subjectId') : undefined;
  if (rawSubject !== undefined && rawSubject !== '') {
    if (!UUID_RE.test(rawSubject)) throw validationFailed('Query.InvalidSubjectId', 'subjectId must be a UUID', 'subjectId');
    subjectId = rawSubject.toLowerCase();
  }
  return { email, state, subjectId };
}

const filterKey = (f: Filter): string => JSON.stringify([f.email, f.state, f.subjectId]);
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

function decodeCursor(text: string | undefined, f: Filter): { createdAt: string; id: string } | null {
  if (text === undefined || text === '') return null;
  const bad = () => validationFailed('Query.InvalidCursor', 'cursor is malformed or belongs to another filter', 'cursor');
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 3) throw bad();
  const [createdAt, id, key] = v as unknown[];
  if (typeof createdAt !== 'string' || !ISO_RE.test(createdAt) || Number.isNaN(Date.parse(createdAt))) throw bad();
  if (typeof id !== 'string' || !UUID_RE.test(id) || key !== filterKey(f)) throw bad();
  return { createdAt, id };
}

const encodeCursor = (r: SubjectRow, f: Filter): string => Buffer.from(JSON.stringify([r.created_at, r.id, filterKey(f)])).toString('base64url');

/** One page of the project's subjects under the filter, and the next cursor when more remain. */
async function subjectPage(ctx: OperationContext, f: Filter): Promise<{ rows: SubjectRow[]; size: number; next?: string }> {
  const size = logPageSize(ctx);
  const after = decodeCursor(ctx.inv.query.get('cursor'), f);
  const params: unknown[] = [ctx.scope!.project.id];
  const where = ['project_id = $1'];
  if (f.email !== null) where.push(`email = $${params.push(f.email)}`);
  if (f.state !== null) where.push(`state = $${params.push(f.state)}`);
  if (f.subjectId !== null) where.push(`id = $${params.push(f.subjectId)}`);
  if (after !== null) where.push(`(created_at, id) > ($${params.push(after.createdAt)}::timestamptz, $${params.push(after.id)}::uuid)`);
  const res = await ctx.services.db.query<SubjectRow>(
    `SELECT ${COLUMNS} FROM plinth.identity_subjects WHERE ${where.join(' AND ')} ORDER BY created_at, id LIMIT ${size + 1}`,
    params,
  );
  const rows = res.rows.slice(0, size);
  return res.rows.length > size ? { rows, size, next: encodeCursor(rows[rows.length - 1]!, f) } : { rows, size };
}

const pageAnswer = (ctx: OperationContext, data: unknown[], p: { size: number; next?: string }): Result =>
  list(ctx, data, { number: 1, size: p.size, ...(p.next === undefined ? {} : { next: p.next }) });

// ---------------------------------------------------------------------------

/** `GET /api/IdentityManagement/subjects?email=&state=&pageSize=&cursor=` → the project's subjects, oldest first. */
const listSubjects = adminOp('IdentityManagement.Subjects.List', {
  summary: 'Page through the project\'s subjects, oldest first', method: 'GET', path: 'subjects',
  query: { ...EMAIL_QUERY, ...STATE_QUERY }, sharedParams: ['PageSize', 'Cursor'],
  output: { status: 200, body: S.IdentitySubjectList },
}, async (ctx) => {
  const f = parseFilter(ctx, false);
  const page = await subjectPage(ctx, f);
  return pageAnswer(ctx, page.rows.map(record), page);
});

/** `GET /api/IdentityManagement/subjects/{id}` → `{ data: { subjectId, email, state, claims, createdAt, deactivatedAt } }`. */
const readSubject = adminOp('IdentityManagement.Subjects.Read', {
  summary: 'Read a subject', method: 'GET', path: 'subjects/:id', params: SUBJECT_ID,
  output: { status: 200, body: S.IdentitySubjectSingle },
}, async (ctx) => {
  const res = await ctx.services.db.query<SubjectRow>(
    `SELECT ${COLUMNS} FROM plinth.identity_subjects WHERE id = $1 AND project_id = $2`,
    [pathSubject(ctx), ctx.scope!.project.id],
  );
  const row = res.rows[0];
  if (row === undefined) throw subjectNotFound();
  return single(ctx, record(row));
});

/**
 * `PUT /api/IdentityManagement/subjects/{id}/claims` `{ claims }` → 200
 * `{ data: { subjectId, claims } }`. Replaces the whole set (`{}` clears it).
 * Access tokens issued afterwards (login, refresh) carry it; tokens already
 * issued keep theirs until they expire (15 min) or are refreshed.
 */
const putClaims = adminOp('IdentityManagement.Subjects.PutClaims', {
  summary: 'Replace a subject\'s claims (carried by tokens issued afterwards)',
  description: 'Replaces the whole set (`{}` clears it). Access tokens issued by later logins and refreshes carry it as `claims`; tokens already issued keep theirs. A bad name or value answers 422 with `field: "claims.<name>"`.',
  method: 'PUT', path: 'subjects/:id/claims', params: SUBJECT_ID,
  body: S.IdentityClaimsInput, reasons: { prefix: 'Identity', fields: { claims: 'Identity.InvalidClaims' } },
  output: { status: 200, body: S.IdentityClaimsSingle },
}, async (ctx) => {
  const subjectId = pathSubject(ctx);
  const claims = parseClaims((ctx.inv.body as { claims: unknown }).claims);
  const res = await ctx.services.db.query<{ id: string; claims: unknown }>(
    'UPDATE plinth.identity_subjects SET claims = $3::jsonb WHERE id = $1 AND project_id = $2 RETURNING id::text AS id, claims',
    [subjectId, ctx.scope!.project.id, JSON.stringify(claims)],
  );
  const row = res.rows[0];
  if (row === undefined) throw subjectNotFound();
  return single(ctx, { subjectId: row.id, claims: claimsOf(row.claims) });
});

/**
 * `POST /api/IdentityManagement/subjects/{id}/deactivate` → 200 the subject,
 * state `deactivated`. Idempotent. The state change comes first: from its
 * commit every node's durable session check (SessionStatus, which joins the
 * subject's state) and refresh refuse the subject's sessions, bounded by the
 * 3 s status cache. Then each live session is revoked: marked in its row and
 * added to the node's revoked set, which refuses it here at once, announces
 * it on the cluster bus (`session-revoked`) so every node refuses it at once,
 * and closes its WebSocket and SSE connections wherever they are.
 * Login of a deactivated subject answers like a wrong password (401).
 */
const deactivateSubject = adminOp('IdentityManagement.Subjects.Deactivate', {
  summary: 'Deactivate a subject: its sessions end at once on every node',
  description: 'Idempotent. Every session of the subject is revoked: its access and refresh tokens answer 401 and its realtime connections are closed (4401), on every node. Login answers 401 `Identity.InvalidCredentials`.',
  method: 'POST', path: 'subjects/:id/deactivate', params: SUBJECT_ID,
  output: { status: 200, body: S.IdentitySubjectSingle },
}, async (ctx) => {
  const subjectId = pathSubject(ctx);
  const projectId = ctx.scope!.project.id;
  const db = ctx.services.db;
  const res = await db.query<SubjectRow>(
    `UPDATE plinth.identity_subjects SET state = 'deactivated', deactivated_at = COALESCE(deactivated_at, now())
      WHERE id = $1 AND project_id = $2 RETURNING ${COLUMNS}`,
    [subjectId, projectId],
  );
  const row = res.rows[0];
  if (row === undefined) throw subjectNotFound();
  const sessions = await db.query<{ id: string }>(
    `UPDATE plinth.identity_sessions SET revoked_at = now()
      WHERE project_id = $1 AND subject_id = $2 AND revoked_at IS NULL AND expires_at > now() RETURNING id::text AS id`,
    [projectId, subjectId],
  );
  for (const s of sessions.rows) revokedSessions.add(s.id);
  return single(ctx, record(row));
});

interface GrantRow { id: string; subject_id: string | null; role: string | null; grant_text: string }
interface HeldGrant { grantId: string; grant: string; via: 'subject' | 'role'; role?: string }

/** Roles a subject holds: `authenticated` while active; a deactivated subject holds none (it cannot authenticate). */
const rolesOf = (r: SubjectRow): string[] => (r.state === 'active' ? [AUTHENTICATED_ROLE] : []);

/**
 * `GET /api/IdentityManagement/memberships?subjectId=&email=&state=&pageSize=&cursor=` →
 * `{ data: [ { subjectId, email, state, roles, grants: [ { grantId, grant, via, role? } ] } ], page }`:
 * per subject (paged like `subjects`), its roles and the capability grants
 * it holds, directly (`via: "subject"`) or through a role (`via: "role"`, `role`).
 */
const listMemberships = adminOp('IdentityManagement.Memberships.List', {
  summary: 'Roles and capability grants of each subject', method: 'GET', path: 'memberships',
  query: { subjectId: { description: 'Only this subject.', schema: { type: 'string', format: 'uuid' } }, ...EMAIL_QUERY, ...STATE_QUERY }, sharedParams: ['PageSize', 'Cursor'],
  output: { status: 200, body: S.IdentityMembershipList },
}, async (ctx) => {
  const f = parseFilter(ctx, true);
  const page = await subjectPage(ctx, f);
  const grants = page.rows.length === 0 ? [] : (await ctx.services.db.query<GrantRow>(
    `SELECT id::text AS id, subject_id::text AS subject_id, role, grant_text FROM plinth.capability_grants
      WHERE project_id = $1 ORDER BY created_at, id`,
    [ctx.scope!.project.id],
  )).rows;
  const data = page.rows.map((r) => {
    const roles = rolesOf(r);
    const held = grants.flatMap((g): HeldGrant[] => {
      if (g.subject_id === r.id) return [{ grantId: g.id, grant: g.grant_text, via: 'subject' }];
      if (g.role !== null && roles.includes(g.role)) return [{ grantId: g.id, grant: g.grant_text, via: 'role', role: g.role }];
      return [];
    });
    return { subjectId: r.id, email: r.email, state: r.state, roles, grants: held };
  });
  return pageAnswer(ctx, data, page);
});

export const IDENTITY_MANAGEMENT_SPECS = {
  'IdentityManagement.Subjects.List': listSubjects,
  'IdentityManagement.Subjects.Read': readSubject,
  'IdentityManagement.Subjects.PutClaims': putClaims,
  'IdentityManagement.Subjects.Deactivate': deactivateSubject,
  'IdentityManagement.Memberships.List': listMemberships,
} as const satisfies Record<string, OperationSpec>;
