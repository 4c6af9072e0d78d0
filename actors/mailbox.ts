/**
 * FIFO queue on a power-of-two ring: push and shift are O(1) and allocate
 * only when the ring doubles (Array#shift is O(n) on large queues).
 */
export class RingBuffer<T> {
  private items: Array<T | undefined>;
  private head = 0;
  private count = 0;

  constructor(initialCapacity = 8) {
    let cap = 1;
    while (cap < initialCapacity) cap <<= 1;
    this.items = new Array<T | undefined>(cap).fill(undefined);
  }

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined; // let the GC have it
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    return item;
  }

  private grow(): void {
    const old = this.items;
    const next = new Array<T | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & (old.length - 1)];
    this.items = next;
    this.head = 0;
  }
}

/** The owner of a mailbox; neither method may reject (the mailbox has nobody to report to). */
export interface MailboxProcessor<U, S> {
  /** Runs one user message; awaited before the next starts, so handlers never interleave. */
  processUser(msg: U): Promise<void>;
  /** Runs one system message (passivation, stop); these go before any queued user message. */
  processSystem(msg: S): Promise<void>;
  /** Both queues are empty and the turn is over; messages posted from here start a new turn. */
  idle(): void;
}

/**
 * Per-activation mailbox. A turn is scheduled only on the idle -> running
 * edge, runs at most `maxPerTurn` messages, then yields with setImmediate so
 * one busy actor cannot starve the others sharing the event loop.
 */
export class Mailbox<U, S> {
  private readonly user = new RingBuffer<U>();
  private readonly system = new RingBuffer<S>(2);
  private running = false;
  private readonly runBound: () => void;

  constructor(
    private readonly processor: MailboxProcessor<U, S>,
    private readonly maxPerTurn: number,
    private readonly onCrash: (err: unknown) => void,
  ) {
    // Bound once: scheduling a turn must not allocate a closure per message.
    this.runBound = () => {
      this.run().catch(this.onCrash);
    };
  }

  get userCount(): number {
    return this.user.length;
  }

  /** True when no turn is running or scheduled. */
  get isIdle(): boolean {
    return !this.running;
  }

  postUser(msg: U): void {
    this.user.push(msg);
    this.schedule();
  }

  postSystem(msg: S): void {
    this.system.push(msg);
    this.schedule();
  }

  /** Removes every queued user message (e.g. to fail them all when activation failed). */
  drainUser(each: (msg: U) => void): void {
    for (let msg = this.user.shift(); msg !== undefined; msg = this.user.shift()) each(msg);
  }

  private schedule(): void {
    if (this.running) return;
    this.running = true;
    // A microtask, not setImmediate: the first message of an idle actor starts without an event-loop hop.
    queueMicrotask(this.runBound);
  }

  private async run(): Promise<void> {
    for (let budget = this.maxPerTurn; budget > 0; budget--) {
      const sys = this.system.shift();
      if (sys !== undefined) {
        await this.processor.processSystem(sys);
        continue;
      }
      const msg = this.user.shift();
      if (msg === undefined) break;
      await this.processor.processUser(msg);
    }
    if (this.system.length > 0 || this.user.length > 0) {
      setImmediate(this.runBound);
      return;
    }
    this.running = false;
    this.processor.idle();
  }
}
