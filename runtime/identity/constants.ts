/** Access tokens live 15 minutes; revocation on other cluster nodes is bounded by this. */
export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
/** A session (and its refresh token chain) lives 30 days from login; refreshing does not extend it. */
export const SESSION_TTL_SECONDS = 30 * 24 * 60 * 60;
export const TOKEN_ISSUER = 'plinth';
export const AUTHENTICATED_ROLE = 'authenticated';
/** How long a step-up elevation lasts: the elevated access token's lifetime (docs/identity.md "Step-up"). */
export const STEP_UP_TTL_SECONDS = ACCESS_TOKEN_TTL_SECONDS;
