import * as grpc from '@grpc/grpc-js';
import type { Services } from '../../runtime/services.js';
import type { ActiveCalls } from './entity-calls.js';
import { addTrailersToLibraryStatuses } from './library-statuses.js';
import { MethodTable } from './method-table.js';
import { reflectionHandlers } from './reflection.js';

export interface GrpcServerOptions {
  /** Largest request message (the REST body limit): a larger one is RESOURCE_EXHAUSTED before it is decoded. */
  maxMessageBytes: number;
}

export interface GrpcServer {
  port: number;
  /**
   * Drains: no new calls; Watch streams end at once with UNAVAILABLE (a
   * client resubscribes elsewhere); other calls get `graceMs` to finish, then
   * are ended the same way and the server is forced down.
   */
  stop(graceMs: number): Promise<void>;
}

/**
 * The gRPC server of a node (CONTRACT: gRPC): one @grpc/grpc-js server for
 * every project, plaintext. Entity methods resolve per call (method-table.ts),
 * reflection answers per project (reflection.ts).
 */
export async function startGrpcServer(services: Services, host: string, port: number, opts: GrpcServerOptions): Promise<GrpcServer> {
  addTrailersToLibraryStatuses();
  const server = new grpc.Server({
    'grpc.max_receive_message_length': opts.maxMessageBytes,
    'grpc.max_send_message_length': -1,
    // Channelz bookkeeping costs every call a few listeners and counters; nothing here reads it.
    'grpc.enable_channelz': 0,
  });
  const active: ActiveCalls = new Set();
  // grpc-js keeps its handlers in this Map (a plain property); the table adds the per-call entity paths.
  // It is grpc-js's internals (pinned in package.json): a version that keeps them elsewhere fails here, at start.
  const internals = server as unknown as { handlers?: unknown };
  if (!(internals.handlers instanceof Map)) throw new Error('@grpc/grpc-js keeps its method handlers elsewhere than in server.handlers: adapters/grpc/method-table.ts needs updating');
  internals.handlers = new MethodTable(services, active);
  for (const h of reflectionHandlers(services)) server.register(h.path, h.func as grpc.handleBidiStreamingCall<Buffer, Buffer>, h.serialize, h.deserialize, h.type);
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err === null ? resolve(p) : reject(err)));
  });
  let stopping: Promise<void> | null = null;
  return {
    port: bound,
    stop: (graceMs) => {
      stopping ??= new Promise<void>((resolve) => {
        const shut = new Promise<void>((done) => server.tryShutdown(() => done()));
        for (const ex of active) if (ex.method === 'Watch') ex.end('stopping');
        const timer = setTimeout(() => {
          for (const ex of active) ex.end('stopping');
          // The ended calls write their status first; then whatever still holds a stream is cut.
          setTimeout(() => server.forceShutdown(), 100).unref();
        }, graceMs);
        timer.unref();
        void shut.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return stopping;
    },
  };
}
