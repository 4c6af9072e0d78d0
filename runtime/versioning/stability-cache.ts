import type { SqlExecutor } from '../../storage/index.js';
import { listStability, type StabilityRecord } from './stability-store.js';

/** What dispatch needs of one binding: fail closed, or the headers a Deprecated binding's responses carry. */
export type BindingVerdict = { retired: true } | { retired: false; headers: Readonly<Record<string, string>> };

export type StabilityMap = ReadonlyMap<string, BindingVerdict>;

export interface BindingStabilitySource {
  /** The project's non-Stable bindings; synchronous on a hit (the hot path's one map lookup). */
  of(projectId: string): StabilityMap | Promise<StabilityMap>;
  invalidate(projectId: string): void | Promise<void>;
}

/** Changes are pushed (local drop, then the cluster bus); the TTL bounds a node that missed a notice. */
const TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;
const EMPTY: StabilityMap = new Map();

/** RFC 9745 `Deprecation: @<unix seconds>`, RFC 8594 `Sunset: <IMF-fixdate>`, RFC 8288 `Link` to the successor. */
export function verdictOf(r: StabilityRecord): BindingVerdict | null {
  if (r.stability === 'Retired') return { retired: true };
  if (r.stability !== 'Deprecated') return null;
  const headers: Record<string, string> = { Deprecation: `@${Math.floor(Date.parse(r.announcedAt) / 1000)}` };
  if (r.sunsetAt !== null) headers.Sunset = new Date(r.sunsetAt).toUTCString();
  if (r.replacement !== null) headers.Link = `<${r.replacement}>; rel="successor-version"`;
  return { retired: false, headers };
}

/** Per-project stability verdicts on this node, compiled once per change. */
export class BindingStabilityCache implements BindingStabilitySource {
  private readonly entries = new Map<string, { map: StabilityMap; loadedAt: number }>();
  private readonly loading = new Map<string, Promise<StabilityMap>>();
  private generation = 0;

  constructor(private readonly db: SqlExecutor, private readonly now: () => number = Date.now) {}

  of(projectId: string): StabilityMap | Promise<StabilityMap> {
    const hit = this.entries.get(projectId);
    if (hit !== undefined && this.now() - hit.loadedAt < TTL_MS) return hit.map;
    let pending = this.loading.get(projectId);
    if (pending === undefined) {
      pending = this.load(projectId).finally(() => {
        if (this.loading.get(projectId) === pending) this.loading.delete(projectId);
      });
      this.loading.set(projectId, pending);
    }
    return pending;
  }

  invalidate(projectId: string): void {
    this.generation++;
    this.entries.delete(projectId);
    this.loading.delete(projectId);
  }

  private async load(projectId: string): Promise<StabilityMap> {
    const generation = this.generation;
    const rows = await listStability(this.db, projectId);
    const map = new Map<string, BindingVerdict>();
    for (const r of rows) {
      const v = verdictOf(r);
      if (v !== null) map.set(r.bindingId, v);
    }
    const compiled = map.size === 0 ? EMPTY : map;
    if (generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(projectId, { map: compiled, loadedAt: this.now() });
    }
    return compiled;
  }
}
