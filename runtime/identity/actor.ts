import type { GrantPolicySet } from '../policy/grant-policy.js';

/** Who is calling, materialized by stage 1. */
export interface Actor {
  /** `apikey`: a project API key (runtime/identity/api-keys.ts); it holds exactly `keyGrants`, never role grants. */
  kind: 'admin' | 'user' | 'anonymous' | 'apikey';
  /** Stable label for audit rows: `platform-admin`, `user:<subjectId>`, `apikey:<keyId>`, `anonymous`. */
  label: string;
  subjectId: string | null;
  /** The project a user token or API key belongs to (stage 2 refuses it elsewhere); null for admin and anonymous. */
  projectId: string | null;
  sessionId: string | null;
  roles: readonly string[];
  /**
   * The subject's claims as carried by its access token (set by the admin,
   * runtime/identity/claims.ts); row policies read them as
   * `{ "$actor": "claims.<name>" }`. Empty for admin and anonymous.
   */
  claims: Readonly<Record<string, string>>;
  /** API keys only: the key's id. */
  apiKeyId?: string;
  /** API keys only: the key's grant strings, the whole of what stage 4 lets it do. */
  keyGrants?: ReadonlySet<string>;
  /** API keys only: the key's grants with their row-policy parts, or null when none carries one. */
  keyPolicy?: GrantPolicySet | null;
  /**
   * API keys created with `scopes`: the MCP scopes the key is limited to on
   * `/mcp` (runtime/mcp/scopes.ts). Absent: every MCP scope (user tokens,
   * admin, keys without scopes).
   */
  mcpScopes?: ReadonlySet<string>;
  /**
   * How strongly the session was authenticated, as carried by its access
   * token: `password` for a login, `mfa-totp` / `mfa-webauthn` for a token
   * elevated through a step-up challenge. Absent: `password`.
   */
  strength?: AuthStrength;
}

/** Authentication strengths, weakest first (CONTRACT: Step-up). */
export const AUTH_STRENGTHS = ['password', 'mfa-totp', 'mfa-webauthn'] as const;
export type AuthStrength = (typeof AUTH_STRENGTHS)[number];

const NONE: Readonly<Record<string, string>> = Object.freeze({});

export const ANONYMOUS: Actor = { kind: 'anonymous', label: 'anonymous', subjectId: null, projectId: null, sessionId: null, roles: [], claims: NONE };
export const PLATFORM_ADMIN: Actor = { kind: 'admin', label: 'platform-admin', subjectId: null, projectId: null, sessionId: null, roles: ['platform-admin'], claims: NONE };

