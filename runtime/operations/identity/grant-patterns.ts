/**
 * The text of a grant and of a role, shared by capability grants (grants.ts),
 * API key grants (api-keys.ts) and their schemas.
 */

/**
 * `entity:<Entity|*>:<verb|*>` (Entity is a PascalCase entity name), `branch:<name|*>:approve` (proposals, CONTRACT
 * "Proposals"), or `operation:<name|*>:invoke` (an authored operation, CONTRACT "Operations": granted like entity grants).
 */
export const GRANT_RE = /^(entity:(\*|[A-Z][A-Za-z0-9]{0,62}):(read|insert|update|delete|\*)|branch:(\*|[a-z0-9][a-z0-9-]{0,62}):approve|operation:(\*|[a-z][A-Za-z0-9]{0,62}):(invoke|\*))$/;
/** Role names (`authenticated`, and whatever roles later sources assign). */
export const ROLE_RE = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;
