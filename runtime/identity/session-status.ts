import type { SqlExecutor } from '../../storage/index.js';
import { UUID_RE } from './keys.js';
import { revokedSessions, type RevokedSessions } from './revocations.js';

/** How long a session's state read from the database is trusted (the bound on a missed cluster announcement). */
export const SESSION_STATUS_TTL_MS = 3_000;
/** Entries kept at most; past it the cache starts over (a cold cache only costs a query per session). */
const MAX_ENTRIES = 100_000;

interface Entry { live: boolean; at: number }

/**
 * Whether a session may still authenticate, from its row in
 * `plinth.identity_sessions` (not revoked, not expired, subject active).
 * The row is the durable truth, so a revocation holds across restarts and on
 * every node. Reads are cached for `ttlMs`; a revocation known to this node
 * (RevokedSessions: made here, or announced on the cluster bus) wins at once,
 * so the cache only delays a revocation whose announcement was missed, by at
 * most `ttlMs`.
 */
export class SessionStatus {
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly db: SqlExecutor,
    private readonly revoked: RevokedSessions = revokedSessions,
    private readonly ttlMs = SESSION_STATUS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async live(projectId: string, sessionId: string): Promise<boolean> {
    if (this.revoked.has(sessionId) || !UUID_RE.test(sessionId) || !UUID_RE.test(projectId)) return false;
    const t = this.now();
    const hit = this.cache.get(sessionId);
    if (hit !== undefined && t - hit.at < this.ttlMs) return hit.live;
    const res = await this.db.query<{ live: boolean }>(
      `SELECT (s.revoked_at IS NULL AND s.expires_at > now() AND u.state = 'active') AS live
         FROM plinth.identity_sessions s JOIN plinth.identity_subjects u ON u.id = s.subject_id
        WHERE s.id = $1 AND s.project_id = $2`,
      [sessionId, projectId],
    );
    const live = res.rows[0]?.live === true;
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(sessionId, { live, at: t });
    // A revocation that landed while we read wins over what we read.
    return live && !this.revoked.has(sessionId);
  }
}
