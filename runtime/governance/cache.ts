import type { SqlExecutor } from '../../storage/index.js';
import type { GovernanceSource } from '../services.js';
import { CompiledEnvelope } from './compiled.js';
import { mergeChain } from './merge.js';
import { readChain } from './store.js';

/**
 * How long a node trusts a cached effective envelope. Changes are pushed
 * (local invalidation, then the cluster bus); the TTL only bounds how long a
 * node that missed a notice (a NATS reconnect) keeps the old one.
 */
const TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;

interface Entry {
  /** Null: no envelope anywhere in the project's chain. */
  envelope: CompiledEnvelope | null;
  loadedAt: number;
}

/**
 * Effective envelopes per project on this node, merged and compiled once per
 * change. A hit is one map lookup, and stays synchronous: stage 3 awaits
 * only on a miss. Any envelope change drops every entry, since it reaches
 * every descendant of the project it was set on; changes are rare, misses
 * cost one recursive query.
 */
export class GovernanceCache implements GovernanceSource {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CompiledEnvelope | null>>();
  /** Bumped by invalidate; a load that began before it must not fill the cache. */
  private generation = 0;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly db: SqlExecutor, private readonly now: () => number = Date.now) {}

  effective(projectId: string): CompiledEnvelope | null | Promise<CompiledEnvelope | null> {
    const hit = this.entries.get(projectId);
    if (hit !== undefined && this.now() - hit.loadedAt < TTL_MS) return hit.envelope;
    let pending = this.loading.get(projectId);
    if (pending === undefined) {
      pending = this.load(projectId).finally(() => {
        if (this.loading.get(projectId) === pending) this.loading.delete(projectId);
      });
      this.loading.set(projectId, pending);
    }
    return pending;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
    for (const l of this.listeners) l();
  }

  /** Called after every invalidation (the quota ledger reloads, since envelopes cap quotas). */
  onInvalidate(listener: () => void): void {
    this.listeners.push(listener);
  }

  private async load(projectId: string): Promise<CompiledEnvelope | null> {
    const gen = this.generation;
    const chain = await readChain(this.db, projectId);
    const merged = mergeChain(chain);
    // An envelope that restricts nothing (`{}`, empty lists) compiles to the same fast path as none.
    const envelope = Object.keys(merged).length === 0 ? null : new CompiledEnvelope(merged);
    if (gen === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(projectId, { envelope, loadedAt: this.now() });
    }
    return envelope;
  }
}
