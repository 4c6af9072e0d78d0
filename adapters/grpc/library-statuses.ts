import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors.js';
import type { PartialStatusObject } from '@grpc/grpc-js/build/src/call-interface.js';

/**
 * CONTRACT (gRPC): every error carries `x-service-code`, `x-service-reason-code`
 * and `x-service-correlation-id`. A few statuses are sent by grpc-js itself,
 * before a call reaches our handlers, from its own transport code: a message
 * above `grpc.max_receive_message_length`, a body that fails to decompress, a
 * deadline the server times out. Interceptors do not see those, so the trailers
 * are added where every status leaves (grpc-js's base call, pinned in
 * package.json; the install refuses to run on a version without it). Statuses
 * of our own handlers already carry them and pass unchanged.
 */
const LIBRARY_STATUS: Partial<Record<grpc.status, { code: string; reasonCode: string }>> = {
  [grpc.status.RESOURCE_EXHAUSTED]: { code: 'PAYLOAD_TOO_LARGE', reasonCode: 'Request.BodyTooLarge' },
  [grpc.status.INTERNAL]: { code: 'INTERNAL', reasonCode: 'Grpc.TransportFailed' },
  [grpc.status.DEADLINE_EXCEEDED]: { code: 'UPSTREAM_TIMEOUT', reasonCode: 'Grpc.DeadlineExceeded' },
  [grpc.status.UNIMPLEMENTED]: { code: 'METHOD_NOT_ALLOWED', reasonCode: 'Route.Unknown' },
  [grpc.status.UNAVAILABLE]: { code: 'UNAVAILABLE', reasonCode: 'Node.Draining' },
};

let installed = false;

export function addTrailersToLibraryStatuses(): void {
  if (installed) return;
  const proto = BaseServerInterceptingCall.prototype as { sendStatus?: (status: PartialStatusObject) => void };
  const send = proto.sendStatus;
  if (typeof send !== 'function') throw new Error('@grpc/grpc-js has no BaseServerInterceptingCall.sendStatus: adapters/grpc/library-statuses.ts needs updating');
  proto.sendStatus = function sendStatus(this: BaseServerInterceptingCall, status: PartialStatusObject): void {
    const ours = status.metadata?.get('x-service-code').length ?? 0;
    const mapped = ours === 0 ? LIBRARY_STATUS[status.code] : undefined;
    if (mapped === undefined) return send.call(this, status);
    const metadata = status.metadata?.clone() ?? new grpc.Metadata();
    metadata.set('x-service-code', mapped.code);
    metadata.set('x-service-reason-code', mapped.reasonCode);
    metadata.set('x-service-correlation-id', randomUUID());
    send.call(this, { ...status, metadata });
  };
  installed = true;
}
