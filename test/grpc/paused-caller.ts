/**
 * A child process of test/grpc/paused-streams.test.ts: the outside caller
 * that opens StreamList calls and never reads them, so its own CPU and
 * memory are not the server's (as with the probe, which ran elsewhere).
 * Driven over IPC: `{ open: n }` opens n calls and answers once each one
 * started (headers) or ended (status); `{ cancel: true }` cancels every call
 * still open and answers once all ended.
 */
import * as grpc from '@grpc/grpc-js';
import { clientOf, loadProto, metadata, serviceTrailers } from './support.js';

export interface CallerConfig { port: number; proto: string; token: string; tenant: string; project: string }
export type Outcome = { started: true } | { started: false; code: number; serviceCode: string; reasonCode: string; correlationId: string };
export type CallerRequest = { open: number } | { cancel: true };
export type CallerReply = { opened: Outcome[] } | { cancelled: number };

const config = JSON.parse(process.env.PAUSED_CALLER ?? 'null') as CallerConfig | null;
if (config !== null) {
  const items = clientOf(loadProto(config.proto), 'ItemService', config.port);
  const md = metadata(config.token, config.tenant, config.project);
  const open = new Set<grpc.ClientReadableStream<unknown>>();

  /** One call nobody reads: no 'data' listener, so grpc-js and HTTP/2 flow control stop the server once their buffers are full. */
  const start = (): Promise<Outcome> => new Promise((resolve) => {
    const call = items.StreamList({ sort: 'seq' }, md) as grpc.ClientReadableStream<unknown>;
    open.add(call);
    call.on('error', () => {});
    call.on('metadata', () => resolve({ started: true }));
    call.on('status', (s: grpc.StatusObject) => {
      open.delete(call);
      const t = serviceTrailers(s.metadata);
      resolve({ started: false, code: s.code, serviceCode: t.code, reasonCode: t.reasonCode, correlationId: t.correlationId });
    });
  });

  process.on('message', (m: CallerRequest) => {
    if ('open' in m) {
      const calls: Array<Promise<Outcome>> = [];
      for (let i = 0; i < m.open; i++) calls.push(start()); // all in one tick, on one connection
      void Promise.all(calls).then((opened) => process.send!({ opened } satisfies CallerReply));
    } else {
      const ending = [...open].map((c) => new Promise<void>((resolve) => {
        c.on('status', () => resolve());
        c.cancel();
      }));
      void Promise.all(ending).then(() => process.send!({ cancelled: ending.length } satisfies CallerReply));
    }
  });
  process.on('disconnect', () => process.exit(0));
}
