import { paceAfter } from '../pacing.js';

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
 * A FIFO of `limit` places. With `pace`, a place is given back only after
 * a pause as long as its page took (runtime/pacing.ts): on PGlite a page's
 * query runs in the node's thread, so back-to-back pages of 200 streams
 * would leave another tenant's request the gaps between them; paced, the
 * pages hold the thread about half of the time and a one-shot read waits
 * for at most the one page running when it came. The page's caller gets
 * its rows at once; only the next page waits.
 */
export class PacedPageQueue implements PageQueue {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number, readonly pace: boolean) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('page queue limit must be a positive integer');
  }

  async run<T>(page: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    const t = performance.now();
    try {
      return await page();
    } finally {
      const pause = this.pace ? paceAfter(performance.now() - t) : 0;
      if (pause >= 1) setTimeout(() => this.next(), pause);
      else this.next();
    }
  }

  /** Hands the place straight to the next waiter (active stays the same), or frees it. */
  private next(): void {
    const waiter = this.waiting.shift();
    if (waiter !== undefined) waiter();
    else this.active--;
  }
}

/**
 * The page queue of a node on `backend`. PGlite has one connection in the
 * node's thread: one page at a time, paced (a second place would only queue
 * a second page behind the first and fill the pause). A pool takes
 * STREAM_PAGE_CONCURRENCY places, unpaced: its statements run elsewhere.
 */
export const pageQueueFor = (backend: 'pglite' | 'postgres', concurrency: number): PageQueue =>
  backend === 'pglite' ? new PacedPageQueue(1, true) : new PacedPageQueue(concurrency, false);
