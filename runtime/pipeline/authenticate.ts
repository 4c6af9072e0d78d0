import { createHash, timingSafeEqual } from 'node:crypto';
import { accessDenied, unauthorized } from '../errors/service-error.js';
import { isApiKeyToken } from '../identity/index.js';
import { ANONYMOUS, PLATFORM_ADMIN, type Actor, type OperationContext } from '../operations/types.js';

/** Constant-time comparison of a presented token with the admin token (digests equalize length). */
export function isAdminToken(token: string, adminDigest: Buffer): boolean {
  const presented = createHash('sha256').update(token).digest();
  return timingSafeEqual(presented, adminDigest);
}

/** Stage 1: authenticate the caller and materialize the actor. */
export async function authenticate(ctx: OperationContext): Promise<Actor> {
  const { inv, services } = ctx;
  const spec = inv.operation;
  // A part of a request that already passed this stage (a GraphQL root field) keeps its actor.
  if (inv.authenticated !== undefined) return requireAuthn(spec.authn, inv.authenticated);
  const bearer = inv.bearer;
  if (bearer === null || bearer === '') {
    if (spec.authn === 'public') return ANONYMOUS;
    throw unauthorized('Auth.MissingBearer', 'a bearer token is required');
  }
  let actor: Actor | null;
  if (isAdminToken(bearer, services.adminTokenDigest)) actor = PLATFORM_ADMIN;
  // The `plk_` prefix marks an API key: one lookup by the id it embeds, never a JWT parse.
  else if (isApiKeyToken(bearer)) actor = services.apiKeys === undefined ? null : await services.apiKeys.verify(bearer);
  else actor = await services.tokens.verify(bearer);
  if (actor === null) {
    // A public route ignores a stale credential rather than failing the caller.
    if (spec.authn === 'public') return ANONYMOUS;
    throw unauthorized('Auth.InvalidToken', 'the bearer token is invalid or expired');
  }
  return requireAuthn(spec.authn, actor);
}

function requireAuthn(authn: OperationContext['inv']['operation']['authn'], actor: Actor): Actor {
  if (authn === 'admin' && actor.kind !== 'admin') {
    throw accessDenied('Access.AdminRequired', 'this operation needs the platform admin credential');
  }
  if (authn !== 'public' && actor.kind === 'anonymous') throw unauthorized('Auth.MissingBearer', 'a bearer token is required');
  return actor;
}
