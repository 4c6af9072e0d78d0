import type { ServiceError } from '../errors/service-error.js';
import type { Outcome } from '../dispatch.js';
import type { Invocation } from '../operations/types.js';

/**
 * One gRPC call as the runtime sees it: the adapter (adapters/grpc/) owns
 * framing, flow control and the call's end; the runtime reads messages and
 * writes encoded ones. It never sees grpc-js itself.
 */
export interface GrpcExchange {
  readonly service: string;
  /** An entity method (names.ts GRPC_METHODS) or an authored operation's (`Approve`). */
  readonly method: string;
  /** The request message of a unary or server-streaming call. */
  readonly request: Uint8Array | null;
  /** Client streaming: the next message, or null once the client half-closed (or the call ended). */
  nextMessage(): Promise<Uint8Array | null>;
  /** Server streaming: queues one message; false when the transport's buffer is full (wait for `drained`). */
  write(message: Uint8Array): boolean;
  /** Resolves once the transport's buffer drained, or the call ended. */
  drained(): Promise<void>;
  /** True once the client cancelled, the deadline passed or the server is stopping. */
  readonly ended: boolean;
  /** Resolves when the call ends for any of those reasons. */
  readonly whenEnded: Promise<void>;
}

/**
 * What a call answers. Unary: one message. Streams: written as they go,
 * `done` at the end. An `error` is a refusal of an operation dispatched for
 * the call (its own audit row exists), or the call's own.
 */
export type GrpcReply =
  | { kind: 'message'; bytes: Uint8Array }
  | { kind: 'done' }
  | { kind: 'error'; error: ServiceError };

/** Dispatches an operation of the call (runtime/dispatch.ts, passed in to keep this module below it). */
export type DispatchFn = (inv: Invocation) => Promise<Outcome>;
