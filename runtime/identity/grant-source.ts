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
  /** Held sets already computed from these rows, per subject and roles (one Set per caller, not per request). */
  held: Map<string, ReadonlySet<string>>;
}

/** Callers remembered per project entry; past it the memo starts over (a miss costs one pass over the rows). */
const MAX_HELD_PER_PROJECT = 10_000;

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
  private readonly loading = new Map<string, Promise<Entry>>();
  /** Bumped by invalidate; a load that started before it must not fill the cache. */
  private readonly generation = new Map<string, number>();

  constructor(private readonly db: SqlExecutor, private readonly ttlMs = 5_000, private readonly now: () => number = Date.now) {}

  async held(projectId: string, subjectId: string, roles: readonly string[]): Promise<ReadonlySet<string>> {
    const entry = await this.entry(projectId);
    const who = `${subjectId}|${roles.join(',')}`;
    const known = entry.held.get(who);
    if (known !== undefined) return known;
    const out = new Set<string>();
    for (const r of entry.rows) {
      if ((r.subject_id !== null && r.subject_id === subjectId) || (r.role !== null && roles.includes(r.role))) out.add(r.grant_text);
    }
    if (entry.held.size >= MAX_HELD_PER_PROJECT) entry.held.clear();
    entry.held.set(who, out);
    return out;
  }

  invalidate(projectId: string): void {
    this.cache.delete(projectId);
    this.loading.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
  }

  private async entry(projectId: string): Promise<Entry> {
    const hit = this.cache.get(projectId);
    if (hit !== undefined && this.now() - hit.loadedAt < this.ttlMs) return hit;
    const pending = this.loading.get(projectId);
    if (pending !== undefined) return pending;
    const gen = this.generation.get(projectId) ?? 0;
    const load = (async (): Promise<Entry> => {
      const res = await this.db.query<GrantRow>(
        'SELECT subject_id::text AS subject_id, role, grant_text FROM plinth.capability_grants WHERE project_id = $1',
        [projectId],
      );
      return { rows: res.rows, loadedAt: this.now(), held: new Map() };
    })();
    this.loading.set(projectId, load);
    try {
      const entry = await load;
      if ((this.generation.get(projectId) ?? 0) === gen) this.cache.set(projectId, entry);
      return entry;
    } finally {
      if (this.loading.get(projectId) === load) this.loading.delete(projectId);
    }
  }
}
