import type { SqlExecutor } from '../../storage/index.js';
import type { GovernanceSource } from '../services.js';
import { CompiledEnvelope } from './compiled.js';
import { mergeChain } from './merge.js';
import { readChain } from './store.js';
import { TtlCache } from '../cache/ttl-cache.js';

/**
 * How long a node trusts a cached effective envelope. Changes are pushed
 * (local invalidation, then the cluster bus); the TTL only bounds how long a
 * node that missed a notice (a NATS reconnect) keeps the old one.
 */
const TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;

/**
 * Effective envelopes per project on this node, merged and compiled once per
 * change. A hit is one map lookup, and stays synchronous: stage 3 awaits
 * only on a miss. Any envelope change drops every entry, since it reaches
 * every descendant of the project it was set on; changes are rare, misses
 * cost one recursive query.
 */
export class GovernanceCache implements GovernanceSource {
  private readonly cache: TtlCache<CompiledEnvelope | null>;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly db: SqlExecutor, now: () => number = Date.now) {
    this.cache = new TtlCache((projectId) => this.load(projectId), TTL_MS, MAX_ENTRIES, now);
  }

  /** Null: no envelope anywhere in the project's chain. */
  effective(projectId: string): CompiledEnvelope | null | Promise<CompiledEnvelope | null> {
    return this.cache.get(projectId);
  }

  invalidate(): void {
    this.cache.clear();
    for (const l of this.listeners) l();
  }

  /** Called after every invalidation (the quota ledger reloads, since envelopes cap quotas). */
  onInvalidate(listener: () => void): void {
    this.listeners.push(listener);
  }

  private async load(projectId: string): Promise<CompiledEnvelope | null> {
    const chain = await readChain(this.db, projectId);
    const merged = mergeChain(chain);
    // An envelope that restricts nothing (`{}`, empty lists) compiles to the same fast path as none.
    return Object.keys(merged).length === 0 ? null : new CompiledEnvelope(merged);
  }
}
