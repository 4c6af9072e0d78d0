import type * as grpc from '@grpc/grpc-js';
import type { GrpcExchange } from '../../runtime/grpc/exchange.js';

/** Why a call ended before its handler finished. */
export type EndReason = 'cancelled' | 'stopping';

type AnyCall = grpc.ServerUnaryCall<Buffer, Buffer> | grpc.ServerWritableStream<Buffer, Buffer> | grpc.ServerReadableStream<Buffer, Buffer>;

/**
 * A grpc-js call as the runtime's GrpcExchange. The call ends for the
 * runtime when the client cancels, its deadline passes (grpc-js emits
 * 'cancelled' for both) or the server stops (`end('stopping')`).
 */
export class CallExchange implements GrpcExchange {
  endReason: EndReason | null = null;
  readonly whenEnded: Promise<void>;
  private resolveEnded!: () => void;
  private reader: AsyncIterator<Buffer> | null = null;
  private drainWaiters: Array<() => void> = [];

  constructor(
    readonly service: string,
    readonly method: string,
    private readonly call: AnyCall,
    readonly request: Uint8Array | null,
  ) {
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
    (call as grpc.ServerUnaryCall<Buffer, Buffer>).on('cancelled', () => this.end('cancelled'));
  }

  get ended(): boolean {
    return this.endReason !== null;
  }

  end(reason: EndReason): void {
    if (this.endReason !== null) return;
    this.endReason = reason;
    this.resolveEnded();
    (this.call as grpc.ServerWritableStream<Buffer, Buffer>).off('drain', this.releaseDrainWaiters);
    this.releaseDrainWaiters();
  }

  write(message: Uint8Array): boolean {
    if (this.ended) return false;
    return (this.call as grpc.ServerWritableStream<Buffer, Buffer>).write(message as Buffer);
  }

  drained(): Promise<void> {
    if (this.ended) return Promise.resolve();
    // One 'drain' listener for every waiter, released on drain or on the call's end (a long Watch keeps none).
    if (this.drainWaiters.length === 0) (this.call as grpc.ServerWritableStream<Buffer, Buffer>).once('drain', this.releaseDrainWaiters);
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private readonly releaseDrainWaiters = (): void => {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  };

  async nextMessage(): Promise<Uint8Array | null> {
    if (this.ended) return null;
    this.reader ??= (this.call as grpc.ServerReadableStream<Buffer, Buffer>)[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    try {
      const next = await Promise.race([this.reader.next(), this.whenEnded.then(() => ({ done: true, value: undefined }) as const)]);
      return next.done === true ? null : next.value;
    } catch {
      this.end('cancelled');
      return null;
    }
  }
}
