import { newContext } from '../dispatch-stages.js';
import { noGrants, type Actor, type Invocation, type OperationContext, type OperationSpec, type Scope } from '../operations/types.js';
import type { Services } from '../services.js';
import type { HandlerDef } from '../authored/types.js';

/**
 * A background handler's authority (CONTRACT "Handlers", Authority): the
 * project's service profile holding exactly the handler's `grants`, as an API
 * key holds its own (stage 4 reads `keyGrants`, never role grants).
 */
export function serviceActor(handler: HandlerDef, projectId: string): Actor {
  return {
    kind: 'apikey', label: `service:${handler.name}`, subjectId: null, projectId, sessionId: null, roles: [], claims: {},
    // Declared grants are plain strings (no row-policy parts): no policy set.
    keyGrants: new Set(handler.grants), keyPolicy: null,
  };
}

/** Stands in for the operation of an attempt: it is never dispatched, only named by the attempt's audit row and its nested calls. */
export const TASK_ATTEMPT_OPERATION: OperationSpec = {
  id: 'ControlPlane.TaskAttempt.Run', authn: 'user', scope: 'project', grants: noGrants,
  execute: () => Promise.reject(new Error('an attempt is run by the scheduling worker, never dispatched')),
};

/** The columns of a run a scope is made from. */
export interface RunPlace {
  tenantId: string;
  projectId: string;
  branch: string;
}

/**
 * Where a run executes: its project and branch pinned to the publication a
 * request would get (main: production's serving publication, by the
 * attempt's correlation id for a ramp; another branch: its head), as
 * resolve-scope.ts does for a request. Null when the project or tenant is gone.
 */
export async function runScope(services: Services, place: RunPlace, correlationId: string): Promise<Scope | null> {
  const tenant = await services.scopes.tenant(place.tenantId);
  if (tenant === null) return null;
  const project = await services.scopes.project(tenant.id, place.projectId);
  if (project === null) return null;
  const publication = place.branch === 'main'
    ? await services.publications.serving(tenant.id, project.id, correlationId)
    : await services.publications.current(tenant.id, project.id, place.branch);
  return { tenant, project, branch: place.branch, publication };
}

/** The OperationContext of one attempt: the service actor in the run's scope under the attempt's own correlation id. */
export function attemptContext(services: Services, scope: Scope, actor: Actor, correlationId: string): OperationContext {
  const inv: Invocation = {
    correlationId, protocol: 'rest', operation: TASK_ATTEMPT_OPERATION, collection: null, relation: null, params: {}, query: new Map(), body: undefined,
    bearer: null, tenantHeader: scope.tenant.id, projectHeader: scope.project.id, branchHeader: scope.branch,
    idempotencyKey: null, ifMatch: null, basePath: '/api', clientAddress: null,
  };
  return newContext(inv, services, actor, scope);
}
