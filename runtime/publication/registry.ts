import type { SqlClient } from '../../storage/index.js';
import type { PublicationSource } from '../services.js';
import { readHead } from '../control/schema-change.js';
import { CompiledPublication } from './compiled-publication.js';
import { PRODUCTION, rampBucket, readEnvironment } from '../deployments/serving.js';
import { PLATFORM_SCHEMA } from '../../storage/index.js';
import type { ProjectModel } from './model.js';

/** How long a node trusts its cached head before re-reading it (bounds staleness if an invalidation is missed). */
const HEAD_TTL_MS = 2_000;

interface Entry {
  pub: CompiledPublication;
  checkedAt: number;
}

/** What production serves (docs/proposals-and-deployments.md): `stable` null = main's head; `next` for `percent` of requests during a ramp. */
interface Production {
  checkedAt: number;
  stable: CompiledPublication | null;
  next: CompiledPublication | null;
  percent: number;
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
  private readonly production = new Map<string, Production>();
  private readonly productionLoading = new Map<string, Promise<Production>>();
  /** Pinned publications compiled on main's SQL schema, by `project/branch/version`. */
  private readonly pinned = new Map<string, CompiledPublication>();

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

  /**
   * The publication serving a request without `X-Service-Branch`: production's
   * pin if a deployment set one (and main's head has not moved since), the
   * ramp's target for its share of correlation ids, otherwise main's head.
   * Unpinned, this is one Map hit more than `current`.
   */
  serving(tenantId: string, projectId: string, correlationId: string): Promise<CompiledPublication> {
    const hit = this.production.get(projectId);
    if (hit !== undefined && this.now() - hit.checkedAt < HEAD_TTL_MS) return this.pick(hit, tenantId, projectId, correlationId);
    let pending = this.productionLoading.get(projectId);
    if (pending === undefined) {
      pending = this.loadProduction(tenantId, projectId).finally(() => this.productionLoading.delete(projectId));
      this.productionLoading.set(projectId, pending);
    }
    return pending.then((p) => this.pick(p, tenantId, projectId, correlationId));
  }

  private pick(p: Production, tenantId: string, projectId: string, correlationId: string): Promise<CompiledPublication> {
    if (p.next !== null && rampBucket(correlationId) < p.percent) return Promise.resolve(p.next);
    return p.stable === null ? this.current(tenantId, projectId, 'main') : Promise.resolve(p.stable);
  }

  private async loadProduction(tenantId: string, projectId: string): Promise<Production> {
    const env = await readEnvironment(this.db, projectId, PRODUCTION);
    let p: Production = { checkedAt: this.now(), stable: null, next: null, percent: 0 };
    if (env !== null) {
      const head = await readHead(this.db, projectId, 'main', false);
      // Every schema change on main deploys at once: a pin made on an older head no longer holds.
      if (Number(env.pinned_head) === head.version) {
        const stable = Number(env.pinned_version) === head.version && env.pinned_branch === 'main' ? null : await this.compilePinned(tenantId, projectId, head.schema, env.pinned_branch, Number(env.pinned_version));
        const next = env.ramp_version === null ? null : await this.compilePinned(tenantId, projectId, head.schema, env.ramp_branch ?? 'main', Number(env.ramp_version));
        p = { checkedAt: this.now(), stable, next, percent: env.ramp_percent };
      }
    }
    this.production.set(projectId, p);
    return p;
  }

  private async compilePinned(tenantId: string, projectId: string, mainSchema: string, branch: string, version: number): Promise<CompiledPublication | null> {
    const key = `${projectId}/${branch}/${version}`;
    const cached = this.pinned.get(key);
    if (cached !== undefined) return cached;
    const res = await this.db.query<{ model: ProjectModel; descriptor_hash: string; created_at: string }>(
      `SELECT model, descriptor_hash, created_at FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1 AND branch = $2 AND version = $3`,
      [projectId, branch, version],
    );
    const row = res.rows[0];
    if (row === undefined) return null;
    // Served on main's tables: the rows production serves are main's, whichever publication describes them.
    const pub = new CompiledPublication({ tenantId, projectId, branch: 'main', version, schema: mainSchema, model: row.model, descriptorHash: row.descriptor_hash, createdAt: row.created_at });
    this.pinned.set(key, pub);
    return pub;
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
    // A new main head deploys to production at once: its serving state is re-read.
    if (pub.record.branch === 'main') this.production.delete(pub.record.projectId);
    this.live.set(key, { pub, checkedAt: this.now() });
  }

  invalidate(projectId: string): void {
    for (const key of this.live.keys()) if (key.startsWith(`${projectId}/`)) this.live.delete(key);
    this.production.delete(projectId);
    for (const key of this.pinned.keys()) if (key.startsWith(`${projectId}/`)) this.pinned.delete(key);
  }
}
