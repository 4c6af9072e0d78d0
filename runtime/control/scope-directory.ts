import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import type { ScopeDirectory } from '../services.js';
import type { ProjectRow, TenantRow } from './rows.js';
import { readTenant } from './tenant-store.js';
import { readProject } from './project-store.js';

/** Entries live briefly: the owning actors invalidate on this node; other nodes converge within the TTL. */
const TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

interface Cached<T> {
  value: T;
  at: number;
}

/** Tenant/project lookups by slug or id for stage 2, cached per node. Misses are not cached. */
export class CachedScopeDirectory implements ScopeDirectory {
  private readonly tenants = new Map<string, Cached<TenantRow>>();
  private readonly projects = new Map<string, Cached<ProjectRow>>();

  constructor(private readonly db: SqlClient) {}

  async tenant(slugOrId: string): Promise<TenantRow | null> {
    const hit = this.tenants.get(slugOrId);
    if (hit !== undefined && Date.now() - hit.at < TTL_MS) return hit.value;
    const row = await readTenant(this.db, slugOrId);
    if (row !== null) this.put(this.tenants, slugOrId, row);
    return row;
  }

  async project(tenantId: string, slugOrId: string): Promise<ProjectRow | null> {
    const key = `${tenantId}/${slugOrId}`;
    const hit = this.projects.get(key);
    if (hit !== undefined && Date.now() - hit.at < TTL_MS) return hit.value;
    const row = await readProject(this.db, tenantId, slugOrId);
    if (row !== null) this.put(this.projects, key, row);
    return row;
  }

  async branchExists(projectId: string, branch: string): Promise<boolean> {
    const res = await this.db.query(`SELECT 1 FROM ${PLATFORM_SCHEMA}.branches WHERE project_id = $1 AND name = $2`, [projectId, branch]);
    return res.rows.length > 0;
  }

  invalidate(): void {
    this.tenants.clear();
    this.projects.clear();
  }

  private put<T>(map: Map<string, Cached<T>>, key: string, value: T): void {
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(key, { value, at: Date.now() });
  }
}
