import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { parseMethodPath } from '../../runtime/grpc/names.js';
import { grpcStatusOf } from '../../runtime/grpc/status.js';
import type { Services } from '../../runtime/services.js';
import { entityMethodHandler, passThrough, type ActiveCalls, type MethodHandler } from './entity-calls.js';
import { serviceErrorOf } from './metadata.js';

/**
 * grpc-js's handler table with a fallback: one server serves every
 * project, and projects gain entities while it runs, so entity paths are not
 * registered one by one. A path of the shape `/service.app.<X>Service/<Method>`
 * with a known method gets its handler when called; whether the caller's
 * project has entity X is decided after its metadata (UNIMPLEMENTED when
 * not). Any other unregistered path is UNIMPLEMENTED with the x-service-*
 * trailers every refusal carries (grpc-js's own answer has none).
 */
export class MethodTable extends Map<string, MethodHandler> {
  constructor(private readonly services: Services, private readonly active: ActiveCalls) {
    super();
  }

  override get(path: string): MethodHandler | undefined {
    const own = super.get(path);
    if (own !== undefined) return own;
    const parsed = parseMethodPath(path);
    return parsed === null ? unimplemented(path) : entityMethodHandler(path, parsed.service, parsed.method, this.services, this.active);
  }
}

/** A bidi handler answers at once, whatever the client streams, so every call shape gets the status. */
function unimplemented(path: string): MethodHandler {
  const func = (call: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
    call.on('error', () => {});
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    const error = new ServiceError('METHOD_NOT_ALLOWED', 'Route.Unknown', `no method ${shown} on this server`);
    call.emit('error', serviceErrorOf(grpcStatusOf(error, randomUUID())));
  };
  return { func, serialize: passThrough, deserialize: passThrough, type: 'bidi', path };
}
