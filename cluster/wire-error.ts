import { ERROR_CODES, type ErrorCode } from '../runtime/errors/codes.js';
import { ServiceError, type ErrorDetails } from '../runtime/errors/service-error.js';

/** A ServiceError as plain data: what crosses a transport (msgpackr body or NATS headers). */
export interface WireError {
  code: ErrorCode;
  reasonCode: string;
  message: string;
  details: ErrorDetails;
}

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/**
 * Only a declared error crosses unmasked; anything else reaching the wire is
 * a bug and leaves as a bare INTERNAL (its text may hold SQL or another
 * tenant's data). The sender is expected to have logged it already.
 */
export function toWireError(err: unknown): WireError {
  if (ServiceError.is(err)) {
    return { code: err.code, reasonCode: err.reasonCode, message: err.message, details: err.details };
  }
  return { code: 'INTERNAL', reasonCode: 'Internal.Unexpected', message: 'internal error', details: {} };
}

/** Rebuilds a ServiceError from wire data; anything malformed becomes INTERNAL rather than a crash. */
export function fromWireError(wire: unknown): ServiceError {
  if (!isRecord(wire)) return new ServiceError('INTERNAL', 'Internal.Unexpected', 'internal error');
  const code = typeof wire.code === 'string' && CODES.has(wire.code) ? (wire.code as ErrorCode) : 'INTERNAL';
  const reasonCode = typeof wire.reasonCode === 'string' ? wire.reasonCode : 'Internal.Unexpected';
  const message = typeof wire.message === 'string' ? wire.message : 'internal error';
  const details = isRecord(wire.details) ? (wire.details as ErrorDetails) : {};
  return new ServiceError(code, reasonCode, message, details);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
