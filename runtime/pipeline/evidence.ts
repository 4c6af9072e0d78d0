import type { ServiceError } from '../errors/service-error.js';
import type { AccessDecision, OperationContext } from '../operations/types.js';

export type Decision = AccessDecision;

/** What a denial adds to its record (the envelope's own fields); null for most rows. */
export interface AuditDetails {
  missingGrants?: readonly string[];
  bindingId?: string;
  requiredStrength?: string;
  /** The protocol of a request that did not come in over REST (`graphql`, …); REST rows leave it out. */
  protocol?: string;
}

/**
 * One audit row. `evaluatedFilter`, `fieldMasks` and `details` are kept as
 * the objects the pipeline built: the writer serializes them in its flush,
 * never on the request path (runtime/pipeline/audit-writer.ts).
 */
export interface AuditRow {
  correlationId: string;
  tenantId: string | null;
  projectId: string | null;
  actor: string;
  operationId: string;
  decision: Decision;
  reasonCode: string;
  status: number;
  /** The pipeline stage that decided: 1–5 for a refusal there, 6 once the operation ran. */
  stage: number;
  evaluatedFilter: unknown;
  fieldMasks: readonly string[];
  details: AuditDetails | null;
}

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

/** Stage 6: one audit row per decision, keyed by correlationId. Buffered; never blocks the reply. */
export function recordEvidence(ctx: OperationContext, status: number, error: ServiceError | null): void {
  const trace = ctx.trace;
  ctx.services.audit.record({
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
  });
}
