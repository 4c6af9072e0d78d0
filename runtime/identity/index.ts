/**
 * What runtime/identity offers the rest of the platform: modules outside the
 * folder import from here, not from the files behind it (the
 * import-through-index rule of .dependency-cruiser.cjs, which also names the
 * few modules below identity that still take actor.ts, claims.ts and the
 * verifier types directly).
 */
export {
  JwtTokenVerifier, signAccessToken, newRefreshToken, parseRefreshToken, refreshTokenHash, refreshTokenIssuedBy, type AccessTokenClaims,
  type SignedAccessToken, sameHash, successorRefreshToken,
} from './tokens.js';
export { SqlGrantSource } from './grant-source.js';
export { projectSigningKey, existingProjectSigningKey, forgetProjectSigningKey, UUID_RE } from './keys.js';
export {
  hashPassword, verifyPassword, isAcceptablePassword, PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH, dummyPasswordHash, needsRehash,
  DEFAULT_HASH_COST, defaultPasswordHashQueue, setPasswordHashCost, MAX_HASH_COST, MIN_HASH_COST,
} from './passwords.js';
export { RevokedSessions, revokedSessions } from './revocations.js';
export { ACCESS_TOKEN_TTL_SECONDS, SESSION_TTL_SECONDS, TOKEN_ISSUER, AUTHENTICATED_ROLE } from './constants.js';
export { base32Decode, hotp, totpStep, base32Encode, matchTotp, newTotpSecret, otpauthUrl } from './totp.js';
export { parseClaims, claimsOf, CLAIM_NAME_RE } from './claims.js';
export { LoginThrottle, type LoginRefusal } from './login-throttle.js';
export { HashGate, defaultHashConcurrency, passwordHashGate } from './hash-gate.js';
export {
  checkProviderUrl, discover, verifyIdToken, authorizationUrl, exchangeCode, forgetDiscovery, newAuthorizationSecrets, type OidcClient,
} from './federation-oidc.js';
export { type Actor, ANONYMOUS, AUTH_STRENGTHS, PLATFORM_ADMIN, type AuthStrength } from './actor.js';
export { grantText, type ApiKeyGrant, isApiKeyToken, apiKeyHash, apiKeyPrefix, newApiKeySecret, ApiKeyVerifier } from './api-keys.js';
export { type IdentityPolicy, identityPolicy } from './policy.js';
export type { TokenVerifier } from './token-verifier.js';
export {
  CHALLENGE_RATE_WINDOW_SECONDS, claimAttempt, completeChallenge, createChallenge, MAX_CHALLENGE_ATTEMPTS, MAX_CHALLENGES_PER_WINDOW,
  readChallenge, recentChallengeCount, type ChallengeRow,
} from './challenges.js';
export { hasConfirmedTotp, useTotpCode, confirmPendingTotp, putPendingTotp } from './totp-store.js';
export {
  assertionOptions, subjectCredentials, verifiedAssertion, DEFAULT_RELYING_PARTY, registrationOptions, saveCredential, verifiedRegistration,
  type WebAuthnRelyingParty,
} from './webauthn.js';
export {
  deleteProvider, listProviders, providerRecord, provisionSubject, readProvider, saveState, takeState, upsertProvider, type ProviderRow,
} from './federation-store.js';
