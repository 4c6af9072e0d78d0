import { BRIDGE_TIMEOUT_REASONS, GRPC_STATUS } from '../errors/codes.js';
import type { ServiceError } from '../errors/service-error.js';

/** gRPC status codes used by name here (grpc/status.proto). */
export const GrpcCode = {
  OK: 0, CANCELLED: 1, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14, UNAUTHENTICATED: 16,
} as const;

/** A call's end as the adapter sends it: status, message and trailing metadata. */
export interface GrpcStatus {
  code: number;
  details: string;
  trailers: Record<string, string>;
}

/**
 * CONTRACT: gRPC's status mapping. CONFLICT splits by what conflicted: a
 * unique key → ALREADY_EXISTS, an If-Match mismatch → ABORTED, anything else
 * (a foreign-key restrict, an idempotency key reused) → FAILED_PRECONDITION;
 * BRIDGE_ERROR splits by its HTTP status (504 → DEADLINE_EXCEEDED, else INTERNAL);
 * every other code has one status (runtime/errors/codes.ts GRPC_STATUS).
 */
export function grpcCodeOf(err: ServiceError): number {
  if (err.code === 'CONFLICT') {
    if (err.reasonCode.endsWith('.UniqueViolation')) return GrpcCode.ALREADY_EXISTS;
    if (err.reasonCode.endsWith('.ConcurrencyTokenMismatch')) return GrpcCode.ABORTED;
    return GrpcCode.FAILED_PRECONDITION;
  }
  if (err.code === 'BRIDGE_ERROR' && BRIDGE_TIMEOUT_REASONS.has(err.reasonCode)) return GrpcCode.DEADLINE_EXCEEDED;
  return GRPC_STATUS[err.code];
}

/** The status of a failed call, with the trailing metadata every error carries (and a quota refusal's headers). */
export function grpcStatusOf(err: ServiceError, correlationId: string): GrpcStatus {
  const trailers: Record<string, string> = {
    'x-service-code': err.code,
    'x-service-reason-code': err.reasonCode,
    'x-service-correlation-id': correlationId,
  };
  if (err.details.field !== undefined) trailers['x-service-field'] = err.details.field;
  if (err.details.missingGrants !== undefined) trailers['x-service-missing-grants'] = err.details.missingGrants.join(',');
  for (const [k, v] of Object.entries(err.details.headers ?? {})) {
    const name = k.toLowerCase();
    if (name.startsWith('x-service-')) trailers[name] = v;
  }
  return { code: grpcCodeOf(err), details: err.message, trailers };
}
