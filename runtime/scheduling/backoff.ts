import { SCHEDULING_TIMING, type RetryPolicy } from './types.js';

/**
 * How long a run waits before attempt `failed + 1` (CONTRACT: `min(maxBackoffSeconds,
 * backoffSeconds × 2^(n−1))` ± 20 % jitter, n the number of the attempt that failed),
 * in milliseconds. Jitter spreads retries of runs that failed together.
 */
export function retryDelayMs(retry: RetryPolicy, failed: number, random: () => number = Math.random): number {
  const base = Math.min(retry.maxBackoffSeconds, retry.backoffSeconds * 2 ** Math.max(0, failed - 1)) * 1000;
  const jitter = 1 + SCHEDULING_TIMING.retryJitter * (2 * random() - 1);
  return Math.max(0, Math.round(base * jitter));
}
