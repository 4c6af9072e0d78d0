import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../../storage/index.js';

/**
 * Step-up challenges and pending WebAuthn registrations
 * (`identity_challenges`, told apart by `purpose`). A challenge is one-time:
 * it completes once. Every proof presented claims an attempt first
 * (compare-and-set on `attempts < MAX_CHALLENGE_ATTEMPTS`), so however many
 * requests race, at most that many proofs are ever checked; after that the
 * challenge is dead and refuses even the right proof.
 */
export const MAX_CHALLENGE_ATTEMPTS = 5;
/** A challenge (and a WebAuthn registration) must be completed within 5 minutes. */
export const CHALLENGE_TTL_SECONDS = 5 * 60;
/** Challenges one subject may start per CHALLENGE_RATE_WINDOW_SECONDS: bounds TOTP guessing to 50 codes per window. */
export const MAX_CHALLENGES_PER_WINDOW = 10;
export const CHALLENGE_RATE_WINDOW_SECONDS = 15 * 60;

export type ChallengePurpose = 'step-up' | 'webauthn-registration';

export interface ChallengeRow {
  id: string;
  subject_id: string;
  purpose: ChallengePurpose;
  require_strength: string | null;
  reason: string | null;
  started_session_id: string | null;
  webauthn_challenge: string | null;
  attempts: number;
  state: 'pending' | 'completed';
  expires_at: string;
  expired: boolean;
}

const COLUMNS = `id::text AS id, subject_id::text AS subject_id, purpose, require_strength, reason, started_session_id::text AS started_session_id,
  webauthn_challenge, attempts, state, expires_at, (expires_at <= now()) AS expired`;

export interface NewChallenge {
  projectId: string;
  subjectId: string;
  purpose: ChallengePurpose;
  requireStrength?: string;
  reason?: string | null;
  startedSessionId: string | null;
  webauthnChallenge?: string | null;
}

/** How many challenges the subject started within the rate window. */
export async function recentChallengeCount(db: SqlExecutor, projectId: string, subjectId: string): Promise<number> {
  const row = (await db.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM plinth.identity_challenges
      WHERE project_id = $1 AND subject_id = $2 AND created_at > now() - $3::int * interval '1 second'`,
    [projectId, subjectId, CHALLENGE_RATE_WINDOW_SECONDS],
  )).rows[0];
  return Number(row?.n ?? 0);
}

export async function createChallenge(db: SqlExecutor, c: NewChallenge): Promise<ChallengeRow> {
  // Rows of this subject that ended long ago go as new ones come: the table stays small without a sweeper.
  await db.query(
    `DELETE FROM plinth.identity_challenges WHERE project_id = $1 AND subject_id = $2 AND expires_at < now() - $3::int * interval '1 second'`,
    [c.projectId, c.subjectId, CHALLENGE_RATE_WINDOW_SECONDS],
  );
  const res = await db.query<ChallengeRow>(
    `INSERT INTO plinth.identity_challenges (id, project_id, subject_id, purpose, require_strength, reason, started_session_id, webauthn_challenge, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + $9::int * interval '1 second') RETURNING ${COLUMNS}`,
    [randomUUID(), c.projectId, c.subjectId, c.purpose, c.requireStrength ?? null, c.reason ?? null, c.startedSessionId, c.webauthnChallenge ?? null, CHALLENGE_TTL_SECONDS],
  );
  return res.rows[0]!;
}

export async function readChallenge(db: SqlExecutor, projectId: string, id: string, purpose: ChallengePurpose): Promise<ChallengeRow | undefined> {
  return (await db.query<ChallengeRow>(
    `SELECT ${COLUMNS} FROM plinth.identity_challenges WHERE id = $1 AND project_id = $2 AND purpose = $3`,
    [id, projectId, purpose],
  )).rows[0];
}

/** Claims one proof attempt; the updated row, or null when the challenge is completed, expired or out of attempts. */
export async function claimAttempt(db: SqlExecutor, projectId: string, id: string): Promise<ChallengeRow | null> {
  return (await db.query<ChallengeRow>(
    `UPDATE plinth.identity_challenges SET attempts = attempts + 1
      WHERE id = $1 AND project_id = $2 AND state = 'pending' AND attempts < $3 AND expires_at > now()
      RETURNING ${COLUMNS}`,
    [id, projectId, MAX_CHALLENGE_ATTEMPTS],
  )).rows[0] ?? null;
}

/** Marks the challenge completed; false when another request completed it first. */
export async function completeChallenge(db: SqlExecutor, projectId: string, id: string): Promise<boolean> {
  const res = await db.query(
    `UPDATE plinth.identity_challenges SET state = 'completed', completed_at = now()
      WHERE id = $1 AND project_id = $2 AND state = 'pending' RETURNING id`,
    [id, projectId],
  );
  return res.rows.length === 1;
}
