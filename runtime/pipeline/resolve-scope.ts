import { notFound, unauthorized, validationFailed, ServiceError } from '../errors/service-error.js';
import { findAuthoredOperation } from '../authored/operations.js';
import { AUTHORED_OPERATION_SPEC, resolveAuthoredOperation } from '../operations/authored/spec.js';
import { resolveEntityRoute } from './entity-route.js';
import type { OperationContext, Scope } from '../operations/types.js';

/** CONTRACT "Branches": the branch name regex (runtime/operations/control/branches.ts). */
const BRANCH_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Reason codes of a project that is not active, by state. */
const PROJECT_STATE_REASONS: Readonly<Record<string, string>> = { suspended: 'Project.Suspended', archived: 'Project.Archived' };

/**
 * Stage 2: resolve tenant, project and branch from the scope headers (slug
 * or id), pin the request to the branch's live publication, and resolve an
 * entity route or an authored operation to its concrete operation.
 */
export async function resolveScope(ctx: OperationContext): Promise<Scope | null> {
  const { inv, services } = ctx;
  if (inv.operation.scope === 'none') return null;
  if (inv.tenantHeader === null || inv.tenantHeader === '') throw validationFailed('Scope.TenantHeaderMissing', 'X-Service-Tenant header is required', 'X-Service-Tenant');
  if (inv.projectHeader === null || inv.projectHeader === '') throw validationFailed('Scope.ProjectHeaderMissing', 'X-Service-Project header is required', 'X-Service-Project');
  const tenant = await services.scopes.tenant(inv.tenantHeader);
  if (tenant === null) throw notFound('Scope.TenantNotFound', 'tenant not found');
  if (tenant.state !== 'active' && ctx.actor.kind !== 'admin') {
    throw new ServiceError('ACCESS_DENIED', 'Tenant.NotActive', `tenant is ${tenant.state}`);
  }
  const project = await services.scopes.project(tenant.id, inv.projectHeader);
  if (project === null) throw notFound('Scope.ProjectNotFound', 'project not found');
  // A user token or API key belongs to exactly one project; it is no credential anywhere else.
  if (ctx.actor.projectId !== null && ctx.actor.projectId !== project.id) {
    throw unauthorized('Auth.TokenProjectMismatch', 'the token was issued for another project');
  }
  // The data plane of a suspended or archived project refuses everyone but the platform admin (docs/authorization.md).
  if (project.state !== 'active' && ctx.actor.kind !== 'admin') {
    throw new ServiceError('ACCESS_DENIED', PROJECT_STATE_REASONS[project.state] ?? 'Project.NotActive', `project is ${project.state}`);
  }
  const branch = inv.branchHeader ?? 'main';
  if (!BRANCH_NAME.test(branch)) throw validationFailed('Scope.InvalidBranch', 'invalid branch name', 'X-Service-Branch');
  if (branch !== 'main' && !(await services.scopes.branchExists(project.id, branch))) throw notFound('Scope.BranchNotFound', 'branch not found');
  // No header: production's serving publication (a pin or ramp of a deployment); with it, that branch's head.
  const publication = await (inv.branchHeader === null ? services.publications.serving(tenant.id, project.id, inv.correlationId) : services.publications.current(tenant.id, project.id, branch));
  const scope: Scope = { tenant, project, branch, publication };
  // An authored operation (CONTRACT "Operations"): its name and, for an instance operation, its entity's collection.
  if (inv.operation === AUTHORED_OPERATION_SPEC) {
    resolveAuthoredOperation(ctx, scope);
    return scope;
  }
  if (inv.collection !== null) {
    // `POST /{collection}/{id}/{name}` is a relation attach by shape; an authored instance operation of that name wins.
    if (inv.relation !== null && inv.operation.id === 'Entity.*.RelationAttach' && findAuthoredOperation(publication, inv.collection, inv.relation) !== undefined) {
      ctx.inv = { ...inv, operation: AUTHORED_OPERATION_SPEC, relation: null, params: { ...inv.params, operation: inv.relation } };
      resolveAuthoredOperation(ctx, scope);
      return scope;
    }
    resolveEntityRoute(ctx, scope);
  }
  return scope;
}
