export { JwtTokenVerifier, signAccessToken, newRefreshToken, parseRefreshToken, refreshTokenHash, refreshTokenIssuedBy, type AccessTokenClaims, type SignedAccessToken } from './tokens.js';
export { SqlGrantSource } from './grant-source.js';
export { projectSigningKey, existingProjectSigningKey, forgetProjectSigningKey } from './keys.js';
export { hashPassword, verifyPassword, isAcceptablePassword, PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH } from './passwords.js';
export { RevokedSessions, revokedSessions } from './revocations.js';
export { ACCESS_TOKEN_TTL_SECONDS, SESSION_TTL_SECONDS, TOKEN_ISSUER, AUTHENTICATED_ROLE } from './constants.js';
export { IDENTITY_SPECS, type IdentityOperationId } from '../operations/identity/index.js';
