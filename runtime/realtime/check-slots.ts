/**
 * A FIFO bound on concurrent realtime filter queries across the node. The
 * DB pool is shared with every request of every tenant: without a bound, a
 * project with many filters and a burst of writes could hold every pooled
 * connection (or, on PGlite, queue thousands of queries) ahead of another
 * tenant's read. Each project's follower runs at most one query at a time,
 * and waiters are served in arrival order, so busy projects take turns.
 */
export class CheckSlots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('CheckSlots limit must be a positive integer');
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same), or free it.
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.active--;
    }
  }
}
