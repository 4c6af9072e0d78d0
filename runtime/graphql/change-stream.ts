import type { ExecutionResult } from 'graphql';
import type { ChangeNotice, RealtimeRecipient } from '../realtime/hub.js';

/**
 * Results rendered but not yet taken by the protocol's loop. graphql-ws
 * takes each as soon as its send returns (sends are synchronous on uWS), so
 * a backlog this long means the loop itself stalled.
 */
const MAX_QUEUED = 10_000;

/**
 * One GraphQL subscription as the realtime hub sees it (a recipient that is
 * notified with values) and as graphql-ws sees it (an async generator of
 * execution results). Each change is completed against the subscription's
 * own selection when it arrives; `return()` (client `complete`, socket
 * closed) detaches it from the hub, which gives its quota slot back.
 */
export class ChangeStream implements RealtimeRecipient, AsyncGenerator<ExecutionResult, undefined> {
  /** Set once attached to the hub; called once on return(). */
  detach: (() => void) | null = null;
  private readonly queue: ExecutionResult[] = [];
  private waiting: ((r: IteratorResult<ExecutionResult, undefined>) => void) | null = null;
  private done = false;

  constructor(private readonly render: (change: ChangeNotice) => ExecutionResult, private readonly overflow: () => void) {}

  /** Never called: a recipient with `notify` gets values, not encoded realtime messages. */
  send(): void {}

  notify(change: ChangeNotice): void {
    if (this.done) return;
    const result = this.render(change);
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting({ value: result, done: false });
      return;
    }
    this.queue.push(result);
    if (this.queue.length > MAX_QUEUED) this.overflow();
  }

  next(): Promise<IteratorResult<ExecutionResult, undefined>> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve({ value: queued, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<ExecutionResult, undefined>> {
    if (!this.done) {
      this.done = true;
      this.queue.length = 0;
      this.detach?.();
      this.detach = null;
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.({ value: undefined, done: true });
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(): Promise<IteratorResult<ExecutionResult, undefined>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}
