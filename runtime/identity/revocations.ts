import { ACCESS_TOKEN_TTL_SECONDS } from './constants.js';
import { RevocationSignals } from './revocation-signals.js';

type Listener = (sessionId: string) => void;

/**
 * Session ids known revoked on this node, kept for one access-token lifetime
 * (after that every access token of the session has expired anyway). This is
 * the fast path: a revocation on this node (or announced by another node on
 * the cluster bus, `add(id, false)`) is refused at once. The durable check is
 * SessionStatus (the session row, cached a few seconds), which holds across
 * restarts and covers a missed announcement.
 */
export class RevokedSessions {
  private readonly until = new Map<string, number>();
  private readonly signals = new RevocationSignals();
  private lastSweep = 0;

  constructor(private readonly ttlMs = ACCESS_TOKEN_TTL_SECONDS * 1000 + 60_000, private readonly now: () => number = Date.now) {}

  /** Marks a session revoked on this node. `notify: false` for revocations learned from another node. */
  add(sessionId: string, notify = true): void {
    const t = this.now();
    this.until.set(sessionId, t + this.ttlMs);
    this.sweep(t);
    this.signals.emit(sessionId, notify);
  }

  has(sessionId: string): boolean {
    const exp = this.until.get(sessionId);
    if (exp === undefined) return false;
    if (exp <= this.now()) {
      this.until.delete(sessionId);
      return false;
    }
    return true;
  }

  get size(): number {
    return this.until.size;
  }

  /** Called with every session id this node revokes (e.g. to broadcast it to the cluster). Returns an unsubscribe. */
  onRevoked(listener: Listener): () => void {
    return this.signals.onRevoked(listener);
  }

  /**
   * Called with every session id revoked on this node or announced by another
   * node (whatever `notify`): the realtime layer closes that session's
   * connections. Returns an unsubscribe.
   */
  onEnded(listener: Listener): () => void {
    return this.signals.onEnded(listener);
  }

  private sweep(t: number): void {
    if (t - this.lastSweep < 30_000) return;
    this.lastSweep = t;
    for (const [id, exp] of this.until) if (exp <= t) this.until.delete(id);
  }
}

/** The node's one set, shared by the verifier and the identity operations. */
export const revokedSessions = new RevokedSessions();
