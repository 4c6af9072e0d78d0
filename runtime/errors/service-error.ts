import { RETRYABLE, type ErrorCode } from './codes.js';

const MARK = Symbol.for('plinth.ServiceError');

/** Extra fields a denial or validation error may carry in its envelope. */
export interface ErrorDetails {
  field?: string;
  missingGrants?: string[];
  /** Merge gates a proposal does not meet (CONTRACT "Proposals"). */
  unmetGates?: string[];
  bindingId?: string;
  retryable?: boolean;
  /** The problems validation found, at most MAX_LISTED_ERRORS of them (error-list.ts). */
  errors?: Array<{ field: string; reasonCode: string; message: string }>;
  /** How many problems were found in all; above `errors.length` the list was cut (`truncated` in the envelope). */
  errorCount?: number;
  /** An access decision other than a plain Deny (`Challenge` for step-up; CONTRACT: Step-up). */
  decision?: string;
  /** The authentication strength a step-up challenge must reach (`mfa-totp`, `mfa-webauthn`). */
  requiredStrength?: string;
  /** MCP scopes the token lacks (runtime/mcp/scopes.ts). */
  missingScopes?: string[];
  /** Structured facts about the error for the caller (`error.details`; a handler's compile problem: `{ path, line, column, message }`). */
  details?: Record<string, unknown>;
  /** Extra response headers (quota headers, Allow, …). */
  headers?: Record<string, string>;
}

/**
 * A declared error: the only kind that reaches a caller unmasked. Everything
 * else is masked as INTERNAL at the edge (see mask.ts).
 *
 * Identity survives realms (worker threads, vm contexts) through a
 * Symbol.for marker rather than instanceof on one class object.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly reasonCode: string;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, reasonCode: string, message: string, details: ErrorDetails = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ServiceError';
    this.code = code;
    this.reasonCode = reasonCode;
    this.details = details;
    (this as unknown as Record<symbol, boolean>)[MARK] = true;
  }

  get retryable(): boolean {
    return this.details.retryable ?? RETRYABLE[this.code];
  }

  static is(value: unknown): value is ServiceError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return ServiceError.is(value);
  }
}

export const validationFailed = (reasonCode: string, message: string, field?: string): ServiceError =>
  new ServiceError('VALIDATION_FAILED', reasonCode, message, field === undefined ? {} : { field });

export const notFound = (reasonCode: string, message: string): ServiceError =>
  new ServiceError('NOT_FOUND', reasonCode, message);

export const conflict = (reasonCode: string, message: string, field?: string): ServiceError =>
  new ServiceError('CONFLICT', reasonCode, message, field === undefined ? {} : { field });

export const unauthorized = (reasonCode: string, message: string): ServiceError =>
  new ServiceError('UNAUTHORIZED', reasonCode, message);

export const accessDenied = (reasonCode: string, message: string, details: ErrorDetails = {}): ServiceError =>
  new ServiceError('ACCESS_DENIED', reasonCode, message, details);
