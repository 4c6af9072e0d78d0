import type { SqlClient } from '../../storage/index.js';
import type { PublicationSource } from '../services.js';
import { readHead } from '../control/schema-change.js';
import { CompiledPublication } from './compiled-publication.js';

/** How long a node trusts its cached head before re-reading it (bounds staleness if an invalidation is missed). */
const HEAD_TTL_MS = 2_000;

interface Entry {
  pub: CompiledPublication;
  checkedAt: number;
}

/**
 * The live publication of each project branch on this node. Requests read
 * the cached, compiled publication; only a miss or an expired check touches
 * SQL, and a publication is compiled once per version. A publication swap is
 * one Map.set, so a request sees the old or the new one, never a mix.
 */
export class PublicationRegistry implements PublicationSource {
  private readonly live = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CompiledPublication>>();

  constructor(private readonly db: SqlClient, private readonly now: () => number = Date.now) {}

  current(tenantId: string, projectId: string, branch: string): Promise<CompiledPublication> {
    const key = `${projectId}/${branch}`;
    const hit = this.live.get(key);
    if (hit !== undefined && this.now() - hit.checkedAt < HEAD_TTL_MS) return Promise.resolve(hit.pub);
    let pending = this.loading.get(key);
    if (pending === undefined) {
      pending = this.load(tenantId, projectId, branch, hit?.pub).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async load(tenantId: string, projectId: string, branch: string, cached: CompiledPublication | undefined): Promise<CompiledPublication> {
    const head = await readHead(this.db, projectId, branch, false);
    const key = `${projectId}/${branch}`;
    if (cached !== undefined && cached.version === head.version) {
      this.live.set(key, { pub: cached, checkedAt: this.now() });
      return cached;
    }
    const pub = new CompiledPublication({
      tenantId, projectId, branch, version: head.version, schema: head.schema, model: head.model,
      descriptorHash: head.hash ?? 'sha256:empty', createdAt: head.createdAt ?? new Date(0).toISOString(),
    });
    this.install(pub);
    return pub;
  }

  install(pub: CompiledPublication): void {
    const key = `${pub.record.projectId}/${pub.record.branch}`;
    const cur = this.live.get(key);
    if (cur !== undefined && cur.pub.version > pub.version) return; // never go back
    this.live.set(key, { pub, checkedAt: this.now() });
  }

  invalidate(projectId: string): void {
    for (const key of this.live.keys()) if (key.startsWith(`${projectId}/`)) this.live.delete(key);
  }
}
