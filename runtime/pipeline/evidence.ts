import type { ServiceError } from '../errors/service-error.js';
import type { OperationContext } from '../operations/types.js';
import type { AuditDetails, Decision, RecordedUsage } from './audit-row.js';

export type { AuditDetails, AuditRow, Decision, RecordedUsage } from './audit-row.js';

const DENIALS = new Set(['UNAUTHORIZED', 'ACCESS_DENIED', 'QUOTA_EXCEEDED']);
const STEP_UP = 'Access.StepUpRequired';

/**
 * The policy result of a request (spec: Policy results). Challenge: stronger
 * authentication would allow it; Deny: authority or policy refused it; Error:
 * the platform failed. Any other error (422, 404, 409, …) was an allowed
 * access whose input or target failed, so it stays Allow, as a masked
 * success is Mask.
 */
export function decisionOf(error: ServiceError | null, fieldMasks: readonly string[]): Decision {
  if (error === null) return fieldMasks.length > 0 ? 'Mask' : 'Allow';
  if (error.reasonCode === STEP_UP) return 'Challenge';
  if (DENIALS.has(error.code)) return 'Deny';
  if (error.code === 'INTERNAL' || error.code === 'UNAVAILABLE') return 'Error';
  return fieldMasks.length > 0 ? 'Mask' : 'Allow';
}

function detailsOf(error: ServiceError | null, protocol: string): AuditDetails | null {
  const other = protocol === 'rest' ? null : { protocol };
  if (error === null) return other;
  const d = error.details;
  if (d.missingGrants === undefined && d.bindingId === undefined && d.requiredStrength === undefined) return other;
  const out: AuditDetails = { ...other };
  if (d.missingGrants !== undefined) out.missingGrants = d.missingGrants;
  if (d.bindingId !== undefined) out.bindingId = d.bindingId;
  if (d.requiredStrength !== undefined) out.requiredStrength = d.requiredStrength;
  return out;
}

/**
 * Stage 6: one audit row per decision, keyed by correlationId, carrying the
 * usage the operation consumed. Buffered; never blocks the reply.
 */
export function recordEvidence(ctx: OperationContext, status: number, error: ServiceError | null, usage: RecordedUsage | null = null): void {
  const trace = ctx.trace;
  ctx.services.audit.record({
    at: Date.now(),
    correlationId: ctx.inv.correlationId,
    tenantId: ctx.scope?.tenant.id ?? null,
    projectId: ctx.scope?.project.id ?? null,
    actor: ctx.actor.label,
    operationId: ctx.operationId,
    decision: decisionOf(error, trace.fieldMasks),
    reasonCode: error === null ? 'Access.Allowed' : error.reasonCode,
    status,
    stage: trace.stage,
    evaluatedFilter: trace.evaluatedFilter,
    fieldMasks: trace.fieldMasks,
    details: detailsOf(error, ctx.inv.protocol),
    usage,
  });
}
