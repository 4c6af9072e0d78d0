import { ServiceError } from '../errors/service-error.js';
import { exhaustedReason, type QuotaWindow } from './catalog.js';

/**
 * The hard-mode answer (CONTRACT: Usage and quotas): 429 QUOTA_EXCEEDED,
 * `retryable: false` (exhausted for the window), and the four quota
 * headers; `used` is the usage counted in the window before this request.
 */
export function quotaExceeded(kind: string, limit: number, used: number, window: QuotaWindow, now: number): ServiceError {
  return new ServiceError('QUOTA_EXCEEDED', exhaustedReason(kind), `the ${kind} quota of ${limit} per ${window.name} is exhausted`, {
    retryable: false,
    headers: {
      'X-Service-Quota-Kind': kind,
      'X-Service-Quota-Limit': String(limit),
      'X-Service-Quota-Used': String(used),
      'X-Service-Quota-Reset': new Date(window.reset(now)).toISOString(),
    },
  });
}
