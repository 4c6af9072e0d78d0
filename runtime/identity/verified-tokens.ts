import type { Actor } from '../identity/actor.js';

interface Entry {
  actor: Actor;
  /** The token's `exp`, in ms. */
  expiresAtMs: number;
  /** The signing key that verified it: a rotated or forgotten key invalidates the entry. */
  key: Uint8Array;
}

/**
 * Access tokens whose signature and claims were verified on this node, keyed by
 * the exact token text. A hit skips the JWT decode, the key lookup and the HMAC
 * (WebCrypto through jose: 100–200 µs and a trip through the libuv pool); the
 * caller still checks the session on every request, so revocation is unchanged.
 * Only successes are kept, so garbage bearers cannot churn it; when full, the
 * oldest entry goes (Map iteration order is insertion order).
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly maxEntries = 50_000, private readonly now: () => number = Date.now) {}

  /** The verified actor, if this token was verified with `currentKey` and has not expired. */
  get(token: string, currentKey: (projectId: string) => Uint8Array | undefined): Actor | null {
    const e = this.entries.get(token);
    if (e === undefined) return null;
    if (e.expiresAtMs <= this.now() || currentKey(e.actor.projectId!) !== e.key) {
      this.entries.delete(token);
      return null;
    }
    return e.actor;
  }

  put(token: string, actor: Actor, expiresAtMs: number, key: Uint8Array): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { actor, expiresAtMs, key });
  }

  get size(): number {
    return this.entries.size;
  }
}
