import { parseMethodPath } from '../../runtime/grpc/names.js';
import type { Services } from '../../runtime/services.js';
import { entityMethodHandler, type ActiveCalls, type MethodHandler } from './entity-calls.js';

/**
 * grpc-js's handler table with a fallback: one server serves every
 * project, and projects gain entities while it runs, so entity paths are not
 * registered one by one. A path of the shape `/service.app.<X>Service/<Method>`
 * with a known method gets its handler when called; whether the caller's
 * project has entity X is decided after its metadata (UNIMPLEMENTED when
 * not). Other paths are grpc-js's own (reflection, or UNIMPLEMENTED).
 */
export class MethodTable extends Map<string, MethodHandler> {
  constructor(private readonly services: Services, private readonly active: ActiveCalls) {
    super();
  }

  override get(path: string): MethodHandler | undefined {
    const own = super.get(path);
    if (own !== undefined) return own;
    const parsed = parseMethodPath(path);
    return parsed === null ? undefined : entityMethodHandler(path, parsed.service, parsed.method, this.services, this.active);
  }
}
