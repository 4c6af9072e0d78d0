import type { SqlExecutor } from '../../storage/index.js';
import { grantPolicySet, type PolicyGrant } from '../policy/grant-policy.js';
import { ALWAYS_TRUSTED, type CacheTrust } from '../cache/cache-trust.js';
import type { GrantSource, HeldGrants } from '../services.js';
import { projectConnections } from '../realtime/session-connections.js';

interface GrantRow {
  subject_id: string | null;
  role: string | null;
  grant_text: string;
  row_filter: string | null;
  check_filter: string | null;
  fields: string | null;
}

/** A stored grant row as a PolicyGrant (policy parts are stored as the JSON text the admin sent). */
export function policyGrantOf(r: { grant_text: string; row_filter: string | null; check_filter: string | null; fields: string | null }): PolicyGrant {
  const g: PolicyGrant = { grant: r.grant_text };
  if (r.row_filter !== null) g.rowFilter = JSON.parse(r.row_filter);
  if (r.check_filter !== null) g.check = JSON.parse(r.check_filter);
  if (r.fields !== null) g.fields = JSON.parse(r.fields) as string[];
  return g;
}

interface Entry {
  rows: readonly GrantRow[];
  loadedAt: number;
  /** The cache trust's epoch when the load started: a gap in bus contact since makes the entry stale. */
  epoch: number;
  /** Held grants already computed from these rows, per subject and roles (once per caller, not per request). */
  held: Map<string, HeldGrants>;
}

/** Callers remembered per project entry; past it the memo starts over (a miss costs one pass over the rows). */
const MAX_HELD_PER_PROJECT = 10_000;

/**
 * Capability grants from `plinth.capability_grants`, cached per project.
 *
 * `invalidate(projectId)` (called by the grant routes on this node, and for
 * another node's change by the cluster bus, which the change waits for) makes
 * the next call reload. In cluster mode `trust` is the node's bus contact: while
 * the node may have missed a notice it reads through to the database, and what
 * it cached before a gap is loaded again (docs/adr/0009). Entries also expire
 * after `ttlMs`, a backstop only.
 */
export class SqlGrantSource implements GrantSource {
  private readonly cache = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  /** Bumped by invalidate; a load that started before it must not fill the cache. */
  private readonly generation = new Map<string, number>();

  constructor(
    private readonly db: SqlExecutor,
    private readonly ttlMs = 5_000,
    private readonly now: () => number = Date.now,
    private readonly trust: CacheTrust = ALWAYS_TRUSTED,
  ) {}

  async held(projectId: string, subjectId: string, roles: readonly string[]): Promise<ReadonlySet<string>> {
    return (await this.heldWithPolicy(projectId, subjectId, roles)).grants;
  }

  async heldWithPolicy(projectId: string, subjectId: string, roles: readonly string[]): Promise<HeldGrants> {
    const entry = await this.entry(projectId);
    const who = `${subjectId}|${roles.join(',')}`;
    const known = entry.held.get(who);
    if (known !== undefined) return known;
    const out = new Set<string>();
    const mine: GrantRow[] = [];
    for (const r of entry.rows) {
      if ((r.subject_id !== null && r.subject_id === subjectId) || (r.role !== null && roles.includes(r.role))) {
        out.add(r.grant_text);
        mine.push(r);
      }
    }
    const policy = mine.some((r) => r.row_filter !== null || r.check_filter !== null || r.fields !== null) ? grantPolicySet(mine.map(policyGrantOf)) : null;
    const held: HeldGrants = { grants: out, policy };
    if (entry.held.size >= MAX_HELD_PER_PROJECT) entry.held.clear();
    entry.held.set(who, held);
    return held;
  }

  invalidate(projectId: string, revoked = false): void {
    // Open realtime subscriptions were authorized under the grants of their time: a deleted grant ends them (they
    // reconnect under the current ones). A created grant only widens what a caller holds (grants unite), so it ends nothing.
    if (revoked) projectConnections.end(projectId);
    this.cache.delete(projectId);
    this.loading.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
  }

  private async entry(projectId: string): Promise<Entry> {
    if (!this.trust.trusted()) return this.load(projectId);
    const epoch = this.trust.epoch;
    const hit = this.cache.get(projectId);
    if (hit !== undefined && hit.epoch === epoch && this.now() - hit.loadedAt < this.ttlMs) return hit;
    const pending = this.loading.get(projectId);
    if (pending !== undefined) return pending;
    const gen = this.generation.get(projectId) ?? 0;
    const load = this.load(projectId);
    this.loading.set(projectId, load);
    try {
      const entry = await load;
      if ((this.generation.get(projectId) ?? 0) === gen && entry.epoch === this.trust.epoch) this.cache.set(projectId, entry);
      return entry;
    } finally {
      if (this.loading.get(projectId) === load) this.loading.delete(projectId);
    }
  }

  private async load(projectId: string): Promise<Entry> {
    const epoch = this.trust.epoch;
    const res = await this.db.query<GrantRow>(
      'SELECT subject_id::text AS subject_id, role, grant_text, row_filter, check_filter, fields FROM plinth.capability_grants WHERE project_id = $1',
      [projectId],
    );
    return { rows: res.rows, loadedAt: this.now(), epoch, held: new Map() };
  }
}
