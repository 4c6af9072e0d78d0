import type { SqlExecutor } from '../../storage/index.js';
import type { GrantSource } from '../services.js';

interface GrantRow {
  subject_id: string | null;
  role: string | null;
  grant_text: string;
}

interface Entry {
  rows: readonly GrantRow[];
  loadedAt: number;
}

/**
 * Capability grants from `plinth.capability_grants`, cached per project.
 *
 * `invalidate(projectId)` (called by the grant routes on this node) makes the
 * next call reload. Entries also expire after `ttlMs` so that, in cluster
 * mode, a grant change made on another node is seen within that bound even
 * before invalidations are broadcast.
 */
export class SqlGrantSource implements GrantSource {
  private readonly cache = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<readonly GrantRow[]>>();
  /** Bumped by invalidate; a load that started before it must not fill the cache. */
  private readonly generation = new Map<string, number>();

  constructor(private readonly db: SqlExecutor, private readonly ttlMs = 5_000, private readonly now: () => number = Date.now) {}

  async held(projectId: string, subjectId: string, roles: readonly string[]): Promise<ReadonlySet<string>> {
    const rows = await this.rows(projectId);
    const out = new Set<string>();
    for (const r of rows) {
      if ((r.subject_id !== null && r.subject_id === subjectId) || (r.role !== null && roles.includes(r.role))) out.add(r.grant_text);
    }
    return out;
  }

  invalidate(projectId: string): void {
    this.cache.delete(projectId);
    this.loading.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
  }

  private async rows(projectId: string): Promise<readonly GrantRow[]> {
    const hit = this.cache.get(projectId);
    if (hit !== undefined && this.now() - hit.loadedAt < this.ttlMs) return hit.rows;
    const pending = this.loading.get(projectId);
    if (pending !== undefined) return pending;
    const gen = this.generation.get(projectId) ?? 0;
    const load = (async () => {
      const res = await this.db.query<GrantRow>(
        'SELECT subject_id::text AS subject_id, role, grant_text FROM plinth.capability_grants WHERE project_id = $1',
        [projectId],
      );
      return res.rows;
    })();
    this.loading.set(projectId, load);
    try {
      const rows = await load;
      if ((this.generation.get(projectId) ?? 0) === gen) this.cache.set(projectId, { rows, loadedAt: this.now() });
      return rows;
    } finally {
      if (this.loading.get(projectId) === load) this.loading.delete(projectId);
    }
  }
}
