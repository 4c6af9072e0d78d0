import { availableParallelism } from 'node:os';
import { ServiceError } from '../errors/service-error.js';

/**
 * Bounds concurrent password hashes. scrypt runs on libuv's thread pool
 * (4 threads by default), which also runs WebCrypto (every JWT check: jose
 * uses crypto.subtle), zlib and fs work. A login flood that fills the pool
 * makes every other tenant's authenticated request wait behind scrypt, so at
 * most `concurrency` hashes run at once (default: one core less than the
 * machine has, at least 1, at most 4), up to `maxQueue` wait (16 per running
 * hash by default), and beyond
 * that a login answers 503 `Identity.Busy` (retryable, Retry-After: 1).
 *
 * One gate per process, because the thread pool is per process.
 */
export class HashGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private concurrency = defaultHashConcurrency(), private maxQueue = HASHES_QUEUED_PER_SLOT * concurrency) {}

  configure(concurrency: number, maxQueue: number): void {
    this.concurrency = Math.max(1, concurrency);
    this.maxQueue = Math.max(0, maxQueue);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.concurrency) this.active++;
    else {
      if (this.waiting.length >= this.maxQueue) {
        throw new ServiceError('UNAVAILABLE', 'Identity.Busy', 'too many logins are being checked right now; retry shortly', { retryable: true, headers: { 'Retry-After': '1' } });
      }
      // The finishing hash hands its slot over (active stays as it is).
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.active--;
    }
  }

  /** Hashes running and waiting (diagnostics and tests). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}

/**
 * The default queue: this many waiting hashes per running one at the default
 * cost (passwords.ts scales it for cheaper test costs). At N = 2^17 a hash
 * took ~1 s on this loaded 2-core machine, so the last one queued waits about
 * 16 hash times: past that a retryable 503 is more honest than a login that
 * outlives the client's timeout. (The fixed 64 of N = 2^14 would mean a minute.)
 */
export const HASHES_QUEUED_PER_SLOT = 16;

export function defaultHashConcurrency(): number {
  return Math.min(4, Math.max(1, availableParallelism() - 1));
}

/** The process's gate; the node sets its bounds at start (PASSWORD_HASH_CONCURRENCY, PASSWORD_HASH_QUEUE). */
export const passwordHashGate = new HashGate();
