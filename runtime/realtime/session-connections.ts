import { ServiceError, unauthorized } from '../errors/service-error.js';
import { revokedSessions, type RevokedSessions } from '../identity/revocations.js';
import type { Actor } from '../operations/types.js';

/** Close code of a realtime WebSocket whose session was revoked (4000–4999: application codes; 4401 mirrors HTTP 401). */
export const SESSION_REVOKED_CLOSE_CODE = 4401;
export const SESSION_REVOKED_REASON_CODE = 'Identity.SessionRevoked';
export const API_KEY_REVOKED_REASON_CODE = 'ApiKey.Revoked';

const API_KEY_OWNER = 'apikey:';

/**
 * What a realtime connection is tracked under: its session, or `apikey:<id>`
 * for an API key (whose deletion ends it the same way); null (not tracked)
 * for the admin credential.
 */
export const connectionOwner = (actor: Actor): string | null =>
  actor.sessionId ?? (actor.apiKeyId === undefined ? null : `${API_KEY_OWNER}${actor.apiKeyId}`);

/** The owner key of an API key (for `end` when the key is deleted). */
export const apiKeyOwner = (keyId: string): string => `${API_KEY_OWNER}${keyId}`;

/** The final error a connection receives when its owner ends (`what`: `connection` or `stream`). */
export function ownerEndedError(owner: string, what: string): ServiceError {
  return owner.startsWith(API_KEY_OWNER)
    ? unauthorized(API_KEY_REVOKED_REASON_CODE, `the API key behind this ${what} was deleted`)
    : unauthorized(SESSION_REVOKED_REASON_CODE, `the session behind this ${what} was revoked`);
}

/**
 * Realtime connections (WebSocket and SSE) by the session (or API key, see
 * connectionOwner) that opened them. When a session is revoked on this node,
 * or another node announces it, every connection it opened is closed at
 * once: a revoked session receives no further change. The node's API key
 * verifier ends a deleted key's connections the same way (node/start.ts).
 * Connections of the admin credential are not tracked.
 */
export class SessionConnections {
  private readonly bySession = new Map<string, Set<() => void>>();

  /** `revoked`: the revocation set that ends sessions; null for a registry ended only through `end` (projectConnections). */
  constructor(revoked: RevokedSessions | null = revokedSessions) {
    revoked?.onEnded((sessionId) => this.end(sessionId));
  }

  /** Registers `close` for the session's revocation; returns the untrack function (call it when the connection ends). */
  track(sessionId: string | null, close: () => void): () => void {
    if (sessionId === null) return () => {};
    let set = this.bySession.get(sessionId);
    if (set === undefined) this.bySession.set(sessionId, (set = new Set()));
    set.add(close);
    return () => {
      const s = this.bySession.get(sessionId);
      if (s === undefined) return;
      s.delete(close);
      if (s.size === 0) this.bySession.delete(sessionId);
    };
  }

  /** Closes every connection of the session. */
  end(sessionId: string): void {
    const set = this.bySession.get(sessionId);
    if (set === undefined) return;
    this.bySession.delete(sessionId);
    for (const close of set) {
      try {
        close();
      } catch {
        /* already closed */
      }
    }
  }

  /** Sessions with open connections (diagnostics and tests). */
  get size(): number {
    return this.bySession.size;
  }
}

/** The process's one registry, fed by the node's revocation set. */
export const sessionConnections = new SessionConnections();

/** Close code of a realtime WebSocket ended because its project's grants changed (4403 mirrors HTTP 403). */
export const GRANTS_CHANGED_CLOSE_CODE = 4403;

/** The final error of a connection ended because its project's grants changed: subscribe again to be authorized anew. */
export const grantsChangedError = (what: string): ServiceError =>
  new ServiceError('ACCESS_DENIED', 'Realtime.GrantsChanged', `the project's grants, state or governance changed; open the ${what} again to subscribe under the current rules`);

/**
 * Realtime connections (WebSocket and SSE) of non-admin callers by project.
 * A subscription is authorized once, at subscribe (stage 4 grants, stage 5
 * row policy bound into its server-side filter); without this registry a
 * deleted grant kept streaming changes to its holder. The grant cache's
 * invalidation (runtime/identity/grant-source.ts, run on the node that
 * changed the grant and, through the cluster bus, on every other node) ends
 * the project's connections; clients reconnect and are authorized anew.
 */
export const projectConnections = new SessionConnections(null);
