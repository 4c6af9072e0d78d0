import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { dispatch } from '../../runtime/dispatch.js';
import { maskError } from '../../runtime/errors/mask.js';
import type { ServiceError } from '../../runtime/errors/service-error.js';
import type { GrpcCallBody, ResponseMetadata } from '../../runtime/grpc/call.js';
import type { GrpcReply } from '../../runtime/grpc/exchange.js';
import { GRPC_METHODS, isGrpcMethod } from '../../runtime/grpc/names.js';
import { GrpcCode, grpcStatusOf } from '../../runtime/grpc/status.js';
import { GRPC_CALL_SPEC } from '../../runtime/operations/grpc/call.js';
import type { Services } from '../../runtime/services.js';
import { CallExchange } from './exchange.js';
import { invocationOf, metadataOf, serviceErrorOf } from './metadata.js';

/** Calls running now, so a stopping server can end its streams with a status. */
export type ActiveCalls = Set<CallExchange>;

/** grpc-js's handler record (not exported by its index). */
export interface MethodHandler {
  func: (...args: never[]) => void;
  serialize: (value: Buffer) => Buffer;
  deserialize: (bytes: Buffer) => Buffer;
  type: 'unary' | 'serverStream' | 'clientStream' | 'bidi';
  path: string;
}

/** Messages pass through grpc-js as bytes: they are decoded with the caller project's types, known only after its metadata. */
export const passThrough = (bytes: Buffer): Buffer => bytes;

const STOPPING: ServiceError['code'] = 'UNAVAILABLE';

/** protobufjs writes Buffers in Node: no copy then. */
const asBuffer = (bytes: Uint8Array | null): Buffer =>
  bytes === null ? Buffer.alloc(0) : Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

type Ending = { code: number; details: string; metadata: grpc.Metadata };

/** A failure outside dispatch (reading the call itself): masked and logged, never a crash of the process. */
function internal(err: unknown, services: Services): Ending {
  const correlationId = randomUUID();
  return serviceErrorOf(grpcStatusOf(maskError(err, correlationId, services.log), correlationId));
}

/** What a call ends with: the reply, a refusal, or (a server stop) UNAVAILABLE so the client retries elsewhere. */
function endingOf(reply: GrpcReply | { kind: 'refused'; error: ServiceError }, ex: CallExchange, correlationId: string): Ending | null {
  if (reply.kind === 'error' || reply.kind === 'refused') return serviceErrorOf(grpcStatusOf(reply.error, correlationId));
  if (ex.endReason === 'stopping') {
    return { code: GrpcCode.UNAVAILABLE, details: 'the server is stopping; retry on another node', metadata: metadataOf({ 'x-service-code': STOPPING, 'x-service-reason-code': 'Node.Draining', 'x-service-correlation-id': correlationId }) };
  }
  return null;
}

/**
 * The handler of one method path (`/service.app.OrderService/Get`, or an
 * authored operation's `/service.app.OrderService/Approve`, always unary):
 * builds the exchange, dispatches `Grpc.Call` with the call's metadata and
 * projects the reply onto the call. Nothing thrown here reaches grpc-js.
 */
export function entityMethodHandler(path: string, service: string, method: string, services: Services, active: ActiveCalls): MethodHandler {
  const type = isGrpcMethod(method) ? GRPC_METHODS[method] : 'unary';
  type AnyServerCall = grpc.ServerUnaryCall<Buffer, Buffer> | grpc.ServerWritableStream<Buffer, Buffer> | grpc.ServerReadableStream<Buffer, Buffer>;
  type Ran = { ending: Ending | null; message: Uint8Array | null; correlationId: string; sendHeaders: () => void };
  const run = async (call: AnyServerCall, request: Buffer | null): Promise<Ran> => {
    const ex = new CallExchange(service, method, call, request);
    // Response headers go once: when a stream starts (`started`), else just before the answer (a success's metadata).
    let headersSent = false;
    const sendOnce = (headers: ResponseMetadata): void => {
      if (headersSent) return;
      headersSent = true;
      call.sendMetadata(metadataOf({ 'x-service-correlation-id': inv.correlationId, ...headers }));
    };
    const body: GrpcCallBody = { exchange: ex, started: sendOnce };
    const inv = invocationOf(GRPC_CALL_SPEC, call.metadata, call.getPeer(), body);
    const done = (ending: Ending | null, message: Uint8Array | null, headers: ResponseMetadata = {}): Ran =>
      ({ ending, message, correlationId: inv.correlationId, sendHeaders: () => sendOnce(headers) });
    active.add(ex);
    try {
      const out = await dispatch(inv, services);
      // A publication served the call once its scope resolved: error trailers name it too (REST's errors carry the header).
      const served = (ending: Ending | null): Ending | null => {
        if (ending !== null && out.publicationVersion !== undefined) ending.metadata.set('x-service-publication-version', String(out.publicationVersion));
        return ending;
      };
      if (!out.ok) return done(served(endingOf({ kind: 'refused', error: out.error }, ex, inv.correlationId)), null);
      const reply = out.result.body as GrpcReply;
      return done(served(endingOf(reply, ex, inv.correlationId)), reply.kind === 'message' ? reply.bytes : null, out.result.headers);
    } catch (err) {
      return done(serviceErrorOf(grpcStatusOf(maskError(err, inv.correlationId, services.log), inv.correlationId)), null);
    } finally {
      active.delete(ex);
    }
  };
  const okTrailers = (correlationId: string): grpc.Metadata => metadataOf({ 'x-service-correlation-id': correlationId });

  if (type === 'unary' || type === 'clientStream') {
    const func = (call: grpc.ServerUnaryCall<Buffer, Buffer> | grpc.ServerReadableStream<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>): void => {
      run(call, type === 'unary' ? (call as grpc.ServerUnaryCall<Buffer, Buffer>).request : null).then(({ ending, message, correlationId, sendHeaders }) => {
        if (ending !== null) callback(ending);
        else {
          sendHeaders();
          callback(null, asBuffer(message), okTrailers(correlationId));
        }
      }).catch((err: unknown) => callback(internal(err, services)));
    };
    return { func, serialize: passThrough, deserialize: passThrough, type, path };
  }
  const func = (call: grpc.ServerWritableStream<Buffer, Buffer>): void => {
    run(call, call.request).then(({ ending, correlationId, sendHeaders }) => {
      if (call.cancelled) return; // grpc-js already ended it (CANCELLED or DEADLINE_EXCEEDED)
      if (ending !== null) call.emit('error', ending);
      else {
        sendHeaders(); // a stream that ended before its first page still names its publication
        call.end(okTrailers(correlationId));
      }
    }).catch((err: unknown) => {
      if (!call.cancelled) call.emit('error', internal(err, services));
    });
  };
  return { func, serialize: passThrough, deserialize: passThrough, type, path };
}
