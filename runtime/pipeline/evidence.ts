import type { ServiceError } from '../errors/service-error.js';
import type { OperationContext } from '../operations/types.js';

export type Decision = 'Allow' | 'Deny' | 'Error';

export interface AuditRow {
  correlationId: string;
  tenantId: string | null;
  projectId: string | null;
  actor: string;
  operationId: string;
  decision: Decision;
  reasonCode: string;
  status: number;
}

const DENIALS = new Set(['UNAUTHORIZED', 'ACCESS_DENIED', 'QUOTA_EXCEEDED']);

/** Stage 6: one audit row per decision, keyed by correlationId. Buffered; never blocks the reply. */
export function recordEvidence(ctx: OperationContext, status: number, error: ServiceError | null): void {
  const decision: Decision = error === null ? 'Allow' : DENIALS.has(error.code) ? 'Deny' : error.code === 'INTERNAL' || error.code === 'UNAVAILABLE' ? 'Error' : 'Allow';
  ctx.services.audit.record({
    correlationId: ctx.inv.correlationId,
    tenantId: ctx.scope?.tenant.id ?? null,
    projectId: ctx.scope?.project.id ?? null,
    actor: ctx.actor.label,
    operationId: ctx.operationId,
    decision,
    reasonCode: error === null ? 'Access.Allowed' : error.reasonCode,
    status,
  });
}
