/**
 * A per-key cache of loaded values for the hot path: a fresh hit is one map
 * lookup and stays synchronous (callers await only on a miss); concurrent
 * misses of one key share one load; a load that began before a drop or a
 * clear never fills the cache with what the drop made stale. Changes are
 * pushed (drop/clear, locally and over the cluster bus); the TTL bounds how
 * long a node that missed a notice keeps a value. Bounded: past `maxEntries`
 * the cache starts over.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; loadedAt: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  /** Bumped by drop and clear: a load that began before must not fill the cache. */
  private generation = 0;

  constructor(
    private readonly load: (key: string) => Promise<V>,
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined && this.now() - hit.loadedAt < this.ttlMs) return hit.value;
    let pending = this.loading.get(key);
    if (pending === undefined) {
      pending = this.fill(key).finally(() => {
        if (this.loading.get(key) === pending) this.loading.delete(key);
      });
      this.loading.set(key, pending);
    }
    return pending;
  }

  drop(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  private async fill(key: string): Promise<V> {
    const generation = this.generation;
    const value = await this.load(key);
    if (generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { value, loadedAt: this.now() });
    }
    return value;
  }
}
