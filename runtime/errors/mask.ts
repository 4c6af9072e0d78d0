import { createHash } from 'node:crypto';
import { ServiceError } from './service-error.js';
import type { Logger } from '../log.js';

/**
 * Mask at the edge: a declared ServiceError passes through; anything else
 * (a driver error, a bug) becomes INTERNAL with only the correlationId.
 * The original is logged server-side with a short hash so operators can
 * group occurrences, and never reaches the caller.
 */
export function maskError(err: unknown, correlationId: string, log: Logger): ServiceError {
  if (ServiceError.is(err)) return err;
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  log.error('unexpected failure', { correlationId, errorHash: hash, error: text, stack: err instanceof Error ? err.stack : undefined });
  return new ServiceError('INTERNAL', 'Internal.Unexpected', `internal error (${correlationId})`);
}
