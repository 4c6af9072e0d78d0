/** SQLSTATE classes we act on. Anything else is an unexpected failure. */
export const SQLSTATE = {
  UNIQUE_VIOLATION: '23505',
  FOREIGN_KEY_VIOLATION: '23503',
  /** ON DELETE/UPDATE RESTRICT on PostgreSQL 18+ (so PGlite); 15–17 report 23503 for it. Treat both alike. */
  RESTRICT_VIOLATION: '23001',
  NOT_NULL_VIOLATION: '23502',
  CHECK_VIOLATION: '23514',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK: '40P01',
  INVALID_TEXT_REPRESENTATION: '22P02',
  NUMERIC_OUT_OF_RANGE: '22003',
  DATETIME_OUT_OF_RANGE: '22008',
  INVALID_DATETIME_FORMAT: '22007',
  UNDEFINED_TABLE: '42P01',
  ADMIN_SHUTDOWN: '57P01',
  /** Class 08 but not a lost connection: the server refused a message (e.g. a Bind with a wrapped parameter count) and the session goes on. */
  PROTOCOL_VIOLATION: '08P01',
} as const;

export interface DatabaseErrorLike {
  code: string;
  constraint?: string;
  detail?: string;
  column?: string;
  table?: string;
}

export function isDatabaseError(err: unknown): err is DatabaseErrorLike {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
    && /^[0-9A-Z]{5}$/.test((err as { code: string }).code);
}

export const sqlstateOf = (err: unknown): string | undefined => (isDatabaseError(err) ? err.code : undefined);

/** Failures that are safe to retry as a whole transaction. */
export function isRetryableTransactionError(err: unknown): boolean {
  const code = sqlstateOf(err);
  return code === SQLSTATE.SERIALIZATION_FAILURE || code === SQLSTATE.DEADLOCK;
}

/**
 * Connection-level failures (terminated backend, reset socket): the request may be retried by the caller.
 * A protocol violation is class 08 too, but retrying the same statement fails the same way: it is a
 * defect of the statement (an unexpected failure), never "connection lost, retry".
 */
export function isConnectionError(err: unknown): boolean {
  const code = sqlstateOf(err);
  if (code === SQLSTATE.PROTOCOL_VIOLATION) return false;
  if (code === SQLSTATE.ADMIN_SHUTDOWN || code?.startsWith('08')) return true;
  const msg = err instanceof Error ? err.message : '';
  return /Connection terminated|ECONNRESET|ECONNREFUSED|EPIPE|Client has encountered a connection error/.test(msg);
}
