import { accessDenied, notFound, ServiceError, validationFailed } from '../../errors/service-error.js';
import { filterGrants } from '../../filter/grants.js';
import { parseFilter } from '../../filter/parse.js';
import { claimsOf, AUTHENTICATED_ROLE, UUID_RE } from '../../identity/index.js';
import { governanceRefusal } from '../../pipeline/governance.js';
import { grantCovered } from '../../pipeline/grants.js';
import { CompiledPolicy, type PolicyVerb } from '../../policy/compiled-policy.js';
import type { GrantPolicySet } from '../../policy/grant-policy.js';
import { RowPolicy } from '../../policy/row-policy.js';
import { grantFor } from '../../publication/operations.js';
import { single } from '../envelopes.js';
import { noGrants, type AccessDecision, type Actor, type DeclaredSpec, type OperationContext } from '../types.js';
import { explainContract } from './explain-contract.js';
import { EXPLAIN_SCHEMAS as S } from './explain-schemas.js';

interface Explained {
  decision: Exclude<AccessDecision, 'Error'>;
  reasonCode: string;
  evaluatedFilter: unknown;
  fieldMasks: readonly string[];
  /** Challenge only: the strength a step-up must reach. */
  requiredStrength?: string;
}

/** The actor to explain: the caller, or (admin only) `asActor.subjectId` as a registered user of the project. */
async function targetActor(ctx: OperationContext, asActor: unknown): Promise<Actor> {
  if (asActor === undefined || asActor === null) return ctx.actor;
  if (ctx.actor.kind !== 'admin') throw accessDenied('Explainability.AsActorAdminOnly', 'asActor is for the platform admin only');
  const subjectId = typeof asActor === 'object' && !Array.isArray(asActor) ? (asActor as { subjectId?: unknown }).subjectId : undefined;
  if (typeof subjectId !== 'string' || !UUID_RE.test(subjectId)) throw validationFailed('Explainability.InvalidActor', 'asActor must be { subjectId: <uuid> }', 'asActor.subjectId');
  const row = (await ctx.services.db.query<{ id: string; claims: unknown }>(
    'SELECT id::text AS id, claims FROM plinth.identity_subjects WHERE id = $1 AND project_id = $2',
    [subjectId.toLowerCase(), ctx.scope!.project.id],
  )).rows[0];
  if (row === undefined) throw notFound('Explainability.SubjectNotFound', 'no such subject in this project');
  return {
    kind: 'user', label: `user:${row.id}`, subjectId: row.id, projectId: ctx.scope!.project.id, sessionId: null,
    roles: [AUTHENTICATED_ROLE], claims: claimsOf(row.claims),
  };
}

async function heldOf(ctx: OperationContext, actor: Actor): Promise<{ grants: ReadonlySet<string>; policy: GrantPolicySet | null }> {
  if (actor.kind === 'apikey') return { grants: actor.keyGrants ?? new Set(), policy: actor.keyPolicy ?? null };
  if (actor.kind !== 'user') return { grants: new Set(), policy: null };
  return ctx.services.grants.heldWithPolicy(ctx.scope!.project.id, actor.subjectId!, actor.roles);
}

const allow = (filter: unknown): Explained => ({ decision: 'Allow', reasonCode: 'Access.Allowed', evaluatedFilter: filter ?? null, fieldMasks: [] });
const deny = (reasonCode: string, filter: unknown): Explained => ({ decision: 'Deny', reasonCode, evaluatedFilter: filter ?? null, fieldMasks: [] });

/**
 * `POST /api/Explainability/access` `{ entity, operation, filter?, asActor? }`:
 * what stages 4 and 5 would decide for that actor, without running the
 * operation. The governance envelope (stage 3) is asked first: past it the
 * answer is Deny `Governance.EnvelopeExceeded`, under a requireStrength the
 * caller's session does not meet it is `Challenge` with `requiredStrength`.
 * The body's shape (an entity name, one of the four operations, no other
 * property) is its contract's schema; the entity and `asActor` are checked here.
 */
export const accessPostSpec: DeclaredSpec = {
  id: 'Explainability.Access.Explain',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: explainContract({
    summary: 'What the access stages would decide for an operation on an entity, without running it',
    description: 'Governance envelope, grants and row policy, as dispatch asks them. `asActor` (platform admin only) explains a user of the project.',
    routes: [{ method: 'POST', path: 'Explainability/access' }],
    body: S.ExplainAccessInput,
    reasons: { prefix: 'Explainability', fields: { entity: 'Explainability.EntityRequired', operation: 'Explainability.InvalidOperation' } },
    output: { status: 200, body: S.ExplainAccessDecision }, errors: [400, 401, 403, 404, 413, 422],
  }),
  async execute(ctx) {
    const body = ctx.inv.body as { entity: string; operation: PolicyVerb; filter?: unknown; asActor?: unknown };
    const actor = await targetActor(ctx, body.asActor);
    const entity = ctx.scope!.publication.entities.get(body.entity);
    if (entity === undefined) throw validationFailed('Explainability.UnknownEntity', `no entity named '${body.entity.slice(0, 64)}'`, 'entity');
    const verb = body.operation;
    const filter = body.filter === undefined || body.filter === null ? null : body.filter;
    const node = filter === null ? null : parseFilter(filter, entity);
    let out: Explained;
    if (actor.kind === 'admin') out = { ...allow(filter), reasonCode: 'Access.AdminBypass' };
    else {
      const held = await heldOf(ctx, actor);
      const required = [grantFor(entity.entityName, verb), ...filterGrants(node)];
      // Stage 3 first, as in dispatch: the envelope refuses or challenges before grants are looked at.
      const refusal = ctx.envelope === null ? null : governanceRefusal(ctx.envelope, actor, required, ctx.operationId);
      if (refusal !== null) {
        out = refusal.details.decision === 'Challenge'
          ? { decision: 'Challenge', reasonCode: refusal.reasonCode, evaluatedFilter: filter, fieldMasks: [], requiredStrength: refusal.details.requiredStrength! }
          : deny(refusal.reasonCode, filter);
      } else if (required.some((g) => !grantCovered(held.grants, g))) out = deny('ExposureBinding.RequiredGrantMissing', filter);
      else if (held.policy === null) out = allow(filter);
      else out = explainPolicy(new RowPolicy(CompiledPolicy.for(ctx.scope!.publication, held.policy), actor), entity, verb, node, filter);
    }
    return single(ctx, out);
  },
};

function explainPolicy(policy: RowPolicy, entity: Parameters<RowPolicy['read']>[0], verb: PolicyVerb, node: Parameters<RowPolicy['guardFilter']>[1], filter: unknown): Explained {
  const v = policy.verb(entity, verb);
  try {
    policy.requireLive(entity, verb);
    if (verb === 'read') policy.guardFilter(entity, node);
  } catch (err) {
    if (!ServiceError.is(err)) throw err;
    return deny(err.reasonCode, filter);
  }
  const rows = verb === 'insert' ? null : v.evaluatedRows(policy.actor);
  const evaluatedFilter = filter === null ? rows : rows === null ? filter : { and: [filter, rows] };
  const masks = verb === 'read' ? v.masked : [];
  if (masks.length > 0) return { decision: 'Mask', reasonCode: 'Access.FieldsMasked', evaluatedFilter, fieldMasks: masks };
  return { decision: 'Allow', reasonCode: rows === null ? 'Access.Allowed' : 'Access.AllowedByRowPolicy', evaluatedFilter, fieldMasks: [] };
}
