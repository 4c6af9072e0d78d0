import { randomBytes } from 'node:crypto';
import type { McpSessionState } from '../../runtime/mcp/context.js';

/** Sessions kept at most per node; past it the least recently used one is dropped. */
export const MAX_SESSIONS = 10_000;
/** A session unused this long is gone (its next request answers 404 and the client initializes again). */
export const SESSION_IDLE_MS = 30 * 60_000;

interface Entry {
  state: McpSessionState;
  /** `tenant/project` of the route that created it: a session is valid on that endpoint only. */
  endpoint: string;
  lastUsed: number;
}

/**
 * MCP sessions (`Mcp-Session-Id`) in this node's memory: what `initialize`
 * settled (protocol version, declared capabilities). A session holds no
 * authority (the bearer is checked on every request), so losing one costs
 * a client only a new `initialize`: in cluster mode a request routed to
 * another node answers 404 and the SDK client re-initializes (docs/mcp.md).
 */
export class McpSessions {
  /** Map order is recency order: a touched entry is re-inserted at the end. */
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly max = MAX_SESSIONS, private readonly idleMs = SESSION_IDLE_MS, private readonly now: () => number = Date.now) {}

  create(endpoint: string, protocolVersion: string, jsonContent: boolean): McpSessionState {
    this.sweep();
    while (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    const state: McpSessionState = { id: randomBytes(16).toString('hex'), protocolVersion, jsonContent };
    this.entries.set(state.id, { state, endpoint, lastUsed: this.now() });
    return state;
  }

  /** The live session `id` of `endpoint`, touched; null when unknown, expired or another endpoint's. */
  get(id: string, endpoint: string): McpSessionState | null {
    const e = this.entries.get(id);
    if (e === undefined || e.endpoint !== endpoint) return null;
    const t = this.now();
    this.entries.delete(id);
    if (t - e.lastUsed >= this.idleMs) return null;
    e.lastUsed = t;
    this.entries.set(id, e);
    return e.state;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops expired sessions from the old end (cheap: it stops at the first live one). */
  private sweep(): void {
    const t = this.now();
    for (const [id, e] of this.entries) {
      if (t - e.lastUsed < this.idleMs) break;
      this.entries.delete(id);
    }
  }
}
