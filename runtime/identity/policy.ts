import { LoginThrottle } from './login-throttle.js';
import type { WebAuthnRelyingParty } from './webauthn.js';

/** The node's identity settings and per-node state (node/config.ts fills it; tests may omit it). */
export interface IdentityPolicy {
  /** How long the refresh token rotated away last still answers with its successor (REFRESH_REUSE_GRACE_MS). 0 disables. */
  readonly refreshReuseGraceMs: number;
  /** Failed-login counters of this node. */
  readonly throttle: LoginThrottle;
  /** FEDERATION_ALLOW_PRIVATE_ISSUERS: OIDC providers may sit on private addresses and use http. Absent: false. */
  readonly federationAllowPrivateIssuers?: boolean;
  /** WEBAUTHN_RP_ID / WEBAUTHN_ORIGIN. Absent: DEFAULT_RELYING_PARTY (loopback). */
  readonly webauthn?: WebAuthnRelyingParty;
}

export const DEFAULT_REFRESH_REUSE_GRACE_MS = 10_000;

let fallback: IdentityPolicy | null = null;

/** `services.identity`, or defaults shared by the services that have none (tests that build Services by hand). */
export function identityPolicy(services: { readonly identity?: IdentityPolicy }): IdentityPolicy {
  if (services.identity !== undefined) return services.identity;
  fallback ??= { refreshReuseGraceMs: DEFAULT_REFRESH_REUSE_GRACE_MS, throttle: new LoginThrottle() };
  return fallback;
}
