import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { AUTHENTICATED_ROLE, grantText, type ApiKeyGrant } from '../identity/index.js';
import { grantCovered } from '../pipeline/grants.js';

const S = PLATFORM_SCHEMA;

/**
 * One approval as a proposal shows it (CONTRACT "Proposals": `{ subjectId | actor, at }`, plus
 * what this platform adds): `headPublicationVersion` is the head the approver reviewed, and
 * `basePublicationVersion` the base it was diffed against; `current` says whether the approval
 * still counts: head and base are both still at those versions (a moved base changes the diff
 * the approver saw) AND the approver still may approve (the admin, or a holder of `branch:<base>:approve` now).
 */
export interface Approval {
  actor: string;
  subjectId?: string;
  at: string;
  headPublicationVersion: number | null;
  basePublicationVersion: number | null;
  current: boolean;
}

interface ApprovalRow { actor: string; subject_id: string | null; at: string; head_version: string | null; base_version: string | null }

/** The two publications an approval reviews: head's, and base's that head was diffed against. */
export interface Reviewed { headVersion: number; baseVersion: number }

/**
 * Records the caller's approval of head at `headVersion` against base at `baseVersion`. One
 * row per actor: approving the same pair again changes nothing; approving after either moved
 * replaces the void approval with a fresh one for the new pair (new `at`).
 */
export async function recordApproval(db: SqlExecutor, proposalId: string, actor: string, subjectId: string | null, v: Reviewed): Promise<void> {
  await db.query(
    `INSERT INTO ${S}.proposal_approvals (proposal_id, actor, subject_id, head_version, base_version) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (proposal_id, actor) DO UPDATE SET head_version = EXCLUDED.head_version, base_version = EXCLUDED.base_version, subject_id = EXCLUDED.subject_id, at = now()
     WHERE ${S}.proposal_approvals.head_version IS DISTINCT FROM EXCLUDED.head_version OR ${S}.proposal_approvals.base_version IS DISTINCT FROM EXCLUDED.base_version`,
    [proposalId, actor, subjectId, v.headVersion, v.baseVersion],
  );
}

/** The approvals of a proposal, oldest first, each marked current or not against the branches' versions now (`now`). */
export async function readApprovals(db: SqlExecutor, projectId: string, proposalId: string, base: string, now: Reviewed): Promise<Approval[]> {
  const res = await db.query<ApprovalRow>(
    `SELECT actor, subject_id, at, head_version, base_version FROM ${S}.proposal_approvals WHERE proposal_id = $1 ORDER BY at, actor`, [proposalId],
  );
  const reviewedNow = (r: ApprovalRow): boolean => r.head_version !== null && Number(r.head_version) === now.headVersion
    && r.base_version !== null && Number(r.base_version) === now.baseVersion;
  const onHead = res.rows.filter(reviewedNow);
  const approvers = onHead.length === 0 ? new Set<string>() : await stillApprovers(db, projectId, base, onHead);
  return res.rows.map((r) => ({
    actor: r.actor,
    ...(r.subject_id === null ? {} : { subjectId: r.subject_id }),
    at: new Date(r.at).toISOString(),
    headPublicationVersion: r.head_version === null ? null : Number(r.head_version),
    basePublicationVersion: r.base_version === null ? null : Number(r.base_version),
    current: approvers.has(r.actor),
  }));
}

/**
 * Which of these approvers may approve into `base` now, read from the tables rather than a
 * node's grant cache: a merge is rare, and a grant revoked a moment ago (on any node) must
 * not count. Users: an active subject of the project holding the grant directly or through
 * its `authenticated` role. API keys: the key still exists and carries the grant.
 */
async function stillApprovers(db: SqlExecutor, projectId: string, base: string, rows: readonly ApprovalRow[]): Promise<Set<string>> {
  const needed = `branch:${base}:approve`;
  const out = new Set<string>();
  const subjects: string[] = [];
  const keys: string[] = [];
  for (const r of rows) {
    if (r.actor === 'platform-admin') out.add(r.actor);
    else if (r.actor.startsWith('user:') && r.subject_id !== null) subjects.push(r.subject_id);
    else if (r.actor.startsWith('apikey:')) keys.push(r.actor.slice('apikey:'.length));
  }
  if (subjects.length > 0) {
    const grants = await db.query<{ subject_id: string; grant_text: string }>(
      `SELECT s.id::text AS subject_id, g.grant_text FROM ${S}.identity_subjects s
         JOIN ${S}.capability_grants g ON g.project_id = s.project_id AND (g.subject_id = s.id OR g.role = $3)
        WHERE s.project_id = $1 AND s.id::text = ANY($2::text[]) AND s.state = 'active' AND g.grant_text LIKE 'branch:%'`,
      [projectId, subjects, AUTHENTICATED_ROLE],
    );
    coveredBy(grants.rows.map((g) => [`user:${g.subject_id}`, g.grant_text]), needed, out);
  }
  if (keys.length > 0) {
    const res = await db.query<{ id: string; grants: unknown }>(
      `SELECT id::text AS id, grants FROM ${S}.api_keys WHERE project_id = $1 AND id::text = ANY($2::text[])`, [projectId, keys],
    );
    const pairs: Array<[string, string]> = [];
    for (const k of res.rows) {
      const raw: unknown = typeof k.grants === 'string' ? JSON.parse(k.grants) : k.grants;
      for (const g of Array.isArray(raw) ? (raw as ApiKeyGrant[]) : []) pairs.push([`apikey:${k.id}`, grantText(g)]);
    }
    coveredBy(pairs, needed, out);
  }
  return out;
}

/** Adds to `out` each actor whose grants (as `[actor, grant]` pairs) cover `needed`. */
function coveredBy(pairs: ReadonlyArray<readonly [string, string]>, needed: string, out: Set<string>): void {
  const byActor = new Map<string, Set<string>>();
  for (const [actor, grant] of pairs) {
    let set = byActor.get(actor);
    if (set === undefined) byActor.set(actor, (set = new Set()));
    set.add(grant);
  }
  for (const [actor, held] of byActor) if (grantCovered(held, needed)) out.add(actor);
}
