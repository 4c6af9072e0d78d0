import { isRetryableTransactionError } from './sql-errors.js';

const MAX_ATTEMPTS = 5;
const BASE_DELAY_MS = 5;

/** Runs attempt() again on SQLSTATE 40001/40P01 with jittered backoff. */
export async function retrySerializable<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (i >= MAX_ATTEMPTS || !isRetryableTransactionError(err)) throw err;
      const delay = BASE_DELAY_MS * 2 ** i * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
