import { BRIDGE_TIMEOUT_REASONS, HTTP_STATUS } from './codes.js';
import { ServiceError } from './service-error.js';

export interface ErrorEnvelope {
  error: {
    code: string;
    message: string;
    reasonCode: string;
    correlationId: string;
    field?: string;
    retryable?: boolean;
    explainUrl: string;
    bindingId?: string;
    missingGrants?: string[];
    unmetGates?: string[];
    errors?: Array<{ field: string; reasonCode: string; message: string }>;
    errorCount?: number;
    truncated?: boolean;
    decision?: string;
    requiredStrength?: string;
    details?: Record<string, unknown>;
  };
}

/** Where the decision record of a request is read back (`GET`, runtime/operations/explainability). */
export const explainUrlOf = (correlationId: string, basePath = '/api'): string =>
  `${basePath}/Explainability/access?correlationId=${encodeURIComponent(correlationId)}`;

/** The spec's HTTP error envelope for a declared error. */
export function toErrorEnvelope(err: ServiceError, correlationId: string, basePath = '/api'): ErrorEnvelope {
  const body: ErrorEnvelope['error'] = {
    code: err.code,
    message: err.message,
    reasonCode: err.reasonCode,
    correlationId,
    retryable: err.retryable,
    // Every error links its decision record (CONTRACT: Explainability), not only denials.
    explainUrl: explainUrlOf(correlationId, basePath),
  };
  const d = err.details;
  if (d.field !== undefined) body.field = d.field;
  if (d.bindingId !== undefined) body.bindingId = d.bindingId;
  if (d.missingGrants !== undefined) body.missingGrants = d.missingGrants;
  if (d.unmetGates !== undefined) body.unmetGates = d.unmetGates;
  if (d.decision !== undefined) body.decision = d.decision;
  if (d.requiredStrength !== undefined) body.requiredStrength = d.requiredStrength;
  if (d.details !== undefined) body.details = d.details;
  if (d.errors !== undefined) {
    body.errors = d.errors;
    body.errorCount = d.errorCount ?? d.errors.length;
    body.truncated = body.errorCount > d.errors.length;
  }
  return { error: body };
}

export const httpStatusOf = (err: ServiceError): number =>
  err.code === 'BRIDGE_ERROR' && BRIDGE_TIMEOUT_REASONS.has(err.reasonCode) ? 504 : HTTP_STATUS[err.code];
