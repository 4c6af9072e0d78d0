import type { SqlExecutor } from '../../storage/index.js';
import { TtlCache } from '../cache/ttl-cache.js';
import { listStability, type StabilityRecord } from './stability-store.js';

/** A Deprecated binding's announcement as JSON-speaking protocols show it (MCP's `_meta.service.deprecation`). */
export interface DeprecationNotice {
  /** When it was announced (ISO 8601; the `Deprecation` header's date). */
  announcedAt: string;
  /** ISO 8601, or null when none was announced (then no `Sunset` header). */
  sunset: string | null;
  /** The replacement (the `Link` header's successor-version target). */
  link: string | null;
}

/** What dispatch needs of one binding: fail closed, or the headers a Deprecated binding's responses carry. */
export type BindingVerdict = { retired: true } | { retired: false; headers: Readonly<Record<string, string>>; notice: DeprecationNotice };

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
  return { retired: false, headers, notice: { announcedAt: r.announcedAt, sunset: r.sunsetAt, link: r.replacement } };
}

/** Per-project stability verdicts on this node, compiled once per change. */
export class BindingStabilityCache implements BindingStabilitySource {
  private readonly cache: TtlCache<StabilityMap>;

  constructor(private readonly db: SqlExecutor, now: () => number = Date.now) {
    this.cache = new TtlCache((projectId) => this.load(projectId), TTL_MS, MAX_ENTRIES, now);
  }

  of(projectId: string): StabilityMap | Promise<StabilityMap> {
    return this.cache.get(projectId);
  }

  invalidate(projectId: string): void {
    this.cache.drop(projectId);
  }

  private async load(projectId: string): Promise<StabilityMap> {
    const rows = await listStability(this.db, projectId);
    const map = new Map<string, BindingVerdict>();
    for (const r of rows) {
      const v = verdictOf(r);
      if (v !== null) map.set(r.bindingId, v);
    }
    return map.size === 0 ? EMPTY : map;
  }
}
