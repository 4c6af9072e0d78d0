import type { Actor } from './actor.js';

/** Verifies a project user's access token (stage 1). Null when the token is not valid. */
export interface TokenVerifier {
  verify(token: string): Promise<Actor | null>;
  /** Whether a user session may still authenticate (not revoked or expired); tokens that carry a session id but are checked elsewhere ask this. */
  sessionLive?(projectId: string, sessionId: string): Promise<boolean>;
}
