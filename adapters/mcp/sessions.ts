import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { McpSessionState } from '../../runtime/mcp/context.js';

/** How long a session id is valid after its `initialize`; then 404 and the client initializes again. */
export const SESSION_TTL_MS = 24 * 60 * 60_000;
/** Ended sessions this node remembers at most (DELETE); past it the oldest are forgotten (they still expire). */
export const MAX_ENDED = 10_000;

interface Payload {
  /** protocol version */
  v: string;
  /** 1: the client declared `service.jsonContent` */
  j: 0 | 1;
  /** the route's tenant and project slugs that opened it: valid on that endpoint only */
  e: string;
  /** expiry, ms since the epoch */
  x: number;
  /** random, so two sessions never share an id */
  n: string;
}

const sign = (key: Buffer, payload: string): string => createHmac('sha256', key).update(payload).digest('base64url');

/**
 * MCP sessions (`Mcp-Session-Id`). A session carries what `initialize`
 * settled (protocol version, the declared `service.jsonContent`) and no
 * authority: the bearer is checked on every request. Its id is the
 * session itself, signed with a key every node derives from the shared
 * admin credential, so any node of a cluster accepts a session another
 * node opened (a load balancer need not be sticky), and nothing is stored
 * per session. DELETE ends a session on the node that receives it
 * (docs/mcp.md: other nodes accept it until it expires, which grants
 * nothing a bearer does not).
 */
export class McpSessions {
  private readonly key: Buffer;
  /** Ended session ids → their expiry; Map order is insertion order, oldest first. */
  private readonly ended = new Map<string, number>();

  constructor(secret: Buffer, private readonly ttlMs = SESSION_TTL_MS, private readonly now: () => number = Date.now) {
    this.key = createHash('sha256').update('plinth mcp session\0').update(secret).digest();
  }

  create(endpoint: string, protocolVersion: string, jsonContent: boolean): McpSessionState {
    const payload: Payload = { v: protocolVersion, j: jsonContent ? 1 : 0, e: endpoint, x: this.now() + this.ttlMs, n: randomBytes(9).toString('base64url') };
    const text = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { id: `${text}.${sign(this.key, text)}`, protocolVersion, jsonContent };
  }

  /** The session `id` names on `endpoint`; null when forged, expired, ended here or another endpoint's. */
  get(id: string, endpoint: string): McpSessionState | null {
    if (id.length > 1024) return null;
    const dot = id.indexOf('.');
    if (dot <= 0) return null;
    const text = id.slice(0, dot);
    const given = Buffer.from(id.slice(dot + 1), 'base64url');
    const expected = Buffer.from(sign(this.key, text), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let p: Payload;
    try {
      p = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Payload;
    } catch {
      return null;
    }
    if (p.e !== endpoint || typeof p.x !== 'number' || p.x <= this.now() || this.ended.has(id)) return null;
    return { id, protocolVersion: String(p.v), jsonContent: p.j === 1 };
  }

  /** Ends a session on this node. */
  end(id: string, expiresAt = this.now() + this.ttlMs): void {
    const t = this.now();
    for (const [k, x] of this.ended) {
      if (x > t && this.ended.size < MAX_ENDED) break;
      this.ended.delete(k);
    }
    this.ended.set(id, expiresAt);
  }
}
