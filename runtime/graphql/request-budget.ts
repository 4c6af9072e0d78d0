import { ServiceError } from '../errors/service-error.js';
import { paceAfter } from '../pacing.js';

/** Default of GRAPHQL_REQUEST_TIMEOUT_MS: how long one GraphQL request may keep the database busy. */
export const DEFAULT_GRAPHQL_REQUEST_TIMEOUT_MS = 5_000;

/**
 * What one GraphQL request may take from the database (docs/graphql.md
 * "Time per request"): a time bound, and a few root fields at a time.
 *
 * - `signal` aborts when the bound passes or the client goes away (the
 *   adapter's signal: an HTTP client that disconnects, a graphql-ws
 *   operation completed or its socket closed). Statements given it are
 *   cancelled on PostgreSQL; no further root field starts on any backend.
 * - Root fields queue for `slots` (1 on PGlite): a request never holds
 *   more than that many statements in the database's queue, so another
 *   request's statement waits for at most those, not for all of this
 *   request's root fields. With `pace` (PGlite, whose statements run in
 *   the node's own thread) a request also pauses between root fields.
 */
export class RequestBudget {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onOuterAbort: () => void;
  private free: number;
  private readonly waiting: Array<() => void> = [];
  private started = 0;
  private lastMs = 0;

  constructor(timeoutMs: number, slots: number, private readonly pace: boolean, private readonly outer?: AbortSignal) {
    this.signal = this.controller.signal;
    this.free = Math.max(1, slots);
    this.timer = setTimeout(() => this.controller.abort(new ServiceError('UNAVAILABLE', 'GraphQL.RequestTimeout',
      `the request ran longer than its bound of ${timeoutMs} ms and was stopped; ask for fewer rows or counts`)), timeoutMs);
    this.timer.unref();
    this.onOuterAbort = () => this.controller.abort(new ServiceError('UNAVAILABLE', 'GraphQL.RequestAborted', 'the client went away'));
    if (outer?.aborted === true) this.onOuterAbort();
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  /** Runs one root field's dispatch in a slot; refused with the abort's reason once the request is over its bound or abandoned. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    // Past the first root field, other requests go first: a turn of the event loop (their I/O, their
    // next statement) and, when statements run in this thread (PGlite), a pause as long as this
    // request's last root field took, so it holds the thread at most half of the time.
    if (this.started++ > 0) {
      if (this.pace && this.lastMs >= 1) await new Promise<void>((resolve) => setTimeout(resolve, this.lastMs).unref());
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const t = performance.now();
    try {
      this.signal.throwIfAborted();
      return await fn();
    } finally {
      this.lastMs = paceAfter(performance.now() - t);
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.free++;
    }
  }

  /** The request answered: no timer or listener outlives it. */
  end(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }
}

/** Root fields of one request at a time: PGlite's one connection gets 1; a pool gives a request a quarter of it. */
export const rootSlotsFor = (connections: number): number => Math.max(1, Math.floor(connections / 4));
