import { MAX_PACE_MS, paceAfter } from '../pacing.js';

/**
 * The node's FIFO of StreamList pages (Services.streams.pages): however
 * many streams are open, at most `limit` of their pages (a List query and
 * the writing of its rows) run at once, so they hold at most that many
 * pooled connections and other tenants' requests keep theirs.
 */
export interface PageQueue {
  run<T>(page: () => Promise<T>): Promise<T>;
}

/**
 * A FIFO of `limit` places; with `pace`, for a database that runs in the
 * node's own thread (PGlite), where a page's query blocks every other
 * tenant's request while it runs. 200 streams whose clients drain a little
 * would otherwise run pages back to back, and a one-shot read would find
 * the thread taken most of the time (issue 22: p99 up to 870 ms). Paced:
 * - a page whose place came up first lets the node's one-shot requests in
 *   flight (`busy`) go first, for at most MAX_PACE_MS (so streams still
 *   progress on a node that is never idle);
 * - a place is given back only after a pause as long as its page took
 *   (runtime/pacing.ts): pages hold the thread at most about half of the
 *   time, and a read waits for at most the one page running when it came.
 * The page's caller gets its rows at once; only the next page waits.
 */
export class PacedPageQueue implements PageQueue {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number, readonly pace: boolean, private readonly busy: () => boolean = () => false) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('page queue limit must be a positive integer');
  }

  async run<T>(page: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    if (this.pace) await this.yieldToRequests();
    const t = performance.now();
    try {
      return await page();
    } finally {
      const pause = this.pace ? paceAfter(performance.now() - t) : 0;
      if (pause >= 1) setTimeout(() => this.next(), pause);
      else this.next();
    }
  }

  /** Waits while the node answers other requests, at most MAX_PACE_MS (by the clock: a loaded machine's timers run late). */
  private async yieldToRequests(): Promise<void> {
    const until = performance.now() + MAX_PACE_MS;
    while (this.busy() && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, BUSY_POLL_MS));
  }

  /** Hands the place straight to the next waiter (active stays the same), or frees it. */
  private next(): void {
    const waiter = this.waiting.shift();
    if (waiter !== undefined) waiter();
    else this.active--;
  }
}

/** How often a page that lets requests go first looks again (no event tells when the last one ended). */
const BUSY_POLL_MS = 2;

/**
 * The page queue of a node on `backend`; `busy` says whether it is
 * answering a one-shot (HTTP) request. PGlite has one connection in the
 * node's thread: one page at a time, paced (a second place would only
 * queue a second page behind the first and fill the pause). A pool takes
 * STREAM_PAGE_CONCURRENCY places, unpaced: its statements run elsewhere.
 */
export const pageQueueFor = (backend: 'pglite' | 'postgres', concurrency: number, busy: () => boolean): PageQueue =>
  backend === 'pglite' ? new PacedPageQueue(1, true, busy) : new PacedPageQueue(concurrency, false);
