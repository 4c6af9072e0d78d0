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

  /** Entity handlers made so far (stateless, so shared by every call of their path); bounded, since paths come from clients. */
  private readonly made = new Map<string, MethodHandler>();

  override get(path: string): MethodHandler | undefined {
    const own = super.get(path) ?? this.made.get(path);
    if (own !== undefined) return own;
    const parsed = parseMethodPath(path);
    if (parsed === null) return unimplemented(path);
    const handler = entityMethodHandler(path, parsed.service, parsed.method, this.services, this.active);
    if (this.made.size >= MAX_MADE) this.made.clear();
    this.made.set(path, handler);
    return handler;
  }
}

const MAX_MADE = 4096;

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
