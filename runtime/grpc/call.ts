import { ServiceError } from '../errors/service-error.js';
import type { OperationContext, Result } from '../operations/types.js';
import { Refused, type CallContext } from './entity-call.js';
import type { DispatchFn, GrpcExchange, GrpcReply } from './exchange.js';
import { grpcSchemaOf } from './schema.js';
import { runBatchCreate, runStreamList, runWatch } from './streams.js';
import { runUnary } from './unary.js';

/** What `Grpc.Call` carries in `inv.body`: the call, and how a Watch tells the client it is attached. */
export interface GrpcCallBody {
  exchange: GrpcExchange;
  /** Sends the response headers with the call's correlationId (a Watch: attached to the hub, changes from now on are delivered). */
  started: () => void;
}

/** A method of an entity the caller's project does not have (or a call with no request message). */
export const unknownMethod = (service: string, method: string): ServiceError =>
  new ServiceError('METHOD_NOT_ALLOWED', 'Route.Unknown', `method ${method} of service.app.${service} does not exist in this project`);

const reply = (r: GrpcReply): Result => ({ status: 200, body: r });

/**
 * Runs one gRPC call for the caller of `ctx` (authenticated and scoped by
 * `Grpc.Call`): finds the entity of the service in the pinned publication's
 * gRPC schema and runs the method, each entity operation dispatched as its
 * REST twin. A refusal of such an operation comes back as the reply's error
 * (its own audit row exists); a malformed request fails this call itself.
 */
export async function runGrpcCall(ctx: OperationContext, dispatch: DispatchFn): Promise<Result> {
  const { exchange: ex, started } = ctx.inv.body as GrpcCallBody;
  const schema = await grpcSchemaOf(ctx.services.db, ctx.scope!.publication);
  const types = schema.services.get(ex.service);
  if (types === undefined) throw unknownMethod(ex.service, ex.method);
  const cc: CallContext = { ctx, dispatch, types };
  try {
    switch (ex.method) {
      case 'Get':
      case 'List':
      case 'Create':
      case 'Update':
      case 'Delete':
        return reply({ kind: 'message', bytes: await runUnary(cc, ex.method, ex.request!) });
      case 'StreamList':
        return reply(await runStreamList(cc, ex, ex.request!, started));
      case 'Watch':
        return reply(await runWatch(cc, ex, ex.request!, started));
      case 'BatchCreate':
        return reply(await runBatchCreate(cc, ex));
    }
  } catch (err) {
    if (err instanceof Refused) return reply({ kind: 'error', error: err.error });
    throw err;
  }
}
