import { notFound } from '../../errors/service-error.js';
import { UUID_TEXT } from '../../control/rows.js';
import type { DefinitionScope } from '../../scheduling/definitions-store.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';

/** Pieces every `/api/scheduling/*` operation shares (CONTRACT "Scheduling"). */

export const SCHEDULING_TAG: TagDecl = {
  name: 'Scheduling',
  description: 'Task definitions, their triggers, runs and attempts: every background execution (scheduled job, event consumer, webhook handler, manual run) is a run of a definition.',
};

type SchedulingContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/** Project- and branch-scoped (X-Service-Branch as for entities), platform admin only, never metered (runs are, as authored invocations). */
export const schedulingOp = (id: string, contract: SchedulingContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: SCHEDULING_TAG, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'beta', ...contract },
});

export const scopeOf = (ctx: OperationContext): DefinitionScope => ({ tenantId: ctx.scope!.tenant.id, projectId: ctx.scope!.project.id, branch: ctx.scope!.branch });

/** A path id that is not a UUID names nothing (and must not reach a uuid column as a 500). */
export function pathId(ctx: OperationContext, param: string, reason: string, what: string): string {
  const raw = ctx.inv.params[param];
  if (raw === undefined || !UUID_TEXT.test(raw)) throw notFound(reason, `${what} not found`);
  return raw.toLowerCase();
}

export const DEFINITION_ID = { id: { description: 'Task definition id.', schema: { type: 'string', format: 'uuid' } } };
