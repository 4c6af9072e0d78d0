import { ServiceError } from '../errors/service-error.js';
import type { OperationContext, Result } from '../operations/types.js';
import { verdictFor } from '../pipeline/binding-stability.js';
import { grpcBindingId } from '../publication/grpc-bindings.js';
import { Refused, type CallContext } from './entity-call.js';
import type { DispatchFn, GrpcExchange, GrpcReply } from './exchange.js';
import { grpcSchemaOf } from './schema.js';
import { runBatchCreate, runStreamList, runWatch } from './streams.js';
import { runUnary } from './unary.js';
import { isGrpcMethod } from './names.js';
import { operationBindingId, runOperation } from './operation-call.js';
import type { GrpcSchema } from './schema.js';

/** Response metadata a call answers with (lower-case gRPC metadata keys). */
export type ResponseMetadata = Readonly<Record<string, string>>;

/** What `Grpc.Call` carries in `inv.body`: the call, and how a stream sends its response headers. */
export interface GrpcCallBody {
  exchange: GrpcExchange;
  /** Sends the response headers: the call's correlationId and `headers` (a Watch: attached to the hub, changes from now on are delivered). */
  started: (headers: ResponseMetadata) => void;
}

/** REST's Deprecation, Sunset and Link headers as gRPC metadata keys (lower case, as HTTP/2 carries them). */
const DEPRECATION_KEYS: Readonly<Record<string, string>> = { Deprecation: 'deprecation', Sunset: 'sunset', Link: 'link' };

/**
 * The metadata every answer of the call carries (docs/grpc.md "Response
 * metadata"): `x-service-publication-version`, the publication that served it
 * (REST's `X-Service-Publication-Version`), and for a Deprecated method
 * binding REST's three deprecation headers.
 */
async function responseMetadata(ctx: OperationContext, bindingId: string): Promise<ResponseMetadata> {
  const md: Record<string, string> = { 'x-service-publication-version': String(ctx.scope!.publication.version) };
  const verdict = await verdictFor(ctx, bindingId);
  if (verdict !== undefined && !verdict.retired) for (const [k, v] of Object.entries(verdict.headers)) md[DEPRECATION_KEYS[k] ?? k.toLowerCase()] = v;
  return md;
}

/** A method of an entity the caller's project does not have (or a call with no request message). */
export const unknownMethod = (service: string, method: string): ServiceError =>
  new ServiceError('METHOD_NOT_ALLOWED', 'Route.Unknown', `method ${method} of service.app.${service} does not exist in this project`);

/** The call's reply; `headers` the response metadata of a successful answer (the adapter sends them if a stream has not yet). */
const reply = (r: GrpcReply, headers?: ResponseMetadata): Result => ({ status: 200, body: r, ...(headers === undefined ? {} : { headers }) });

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
  if (types === undefined || !isGrpcMethod(ex.method)) return runOperationCall(ctx, dispatch, schema, ex);
  const bindingId = grpcBindingId(types.entity.entityName, ex.method);
  const cc: CallContext = { ctx, dispatch, types, bindingId };
  const headers = await responseMetadata(ctx, bindingId);
  const sendHeaders = (): void => started(headers);
  try {
    switch (ex.method) {
      case 'Get':
      case 'List':
      case 'Create':
      case 'Update':
      case 'Delete':
        return reply({ kind: 'message', bytes: await runUnary(cc, ex.method, ex.request!) }, headers);
      case 'StreamList':
        return reply(await runStreamList(cc, ex, ex.request!, sendHeaders), headers);
      case 'Watch':
        return reply(await runWatch(cc, ex, ex.request!, sendHeaders), headers);
      case 'BatchCreate':
        return reply(await runBatchCreate(cc, ex), headers);
    }
  } catch (err) {
    // A refusal is an error answer: only the publication version goes with it (REST's errors carry no deprecation headers).
    if (err instanceof Refused) return reply({ kind: 'error', error: err.error });
    throw err;
  }
}

/** A method that is no entity method: an authored operation's (`OrderService/Approve`, `OperationService/Recalculate`), or unknown. */
async function runOperationCall(ctx: OperationContext, dispatch: DispatchFn, schema: GrpcSchema, ex: GrpcExchange): Promise<Result> {
  const op = schema.operations.get(`${ex.service}/${ex.method}`);
  if (op === undefined || ex.request === null) throw unknownMethod(ex.service, ex.method);
  const headers = await responseMetadata(ctx, operationBindingId(op));
  try {
    return reply({ kind: 'message', bytes: await runOperation(ctx, dispatch, schema, op, ex.request) }, headers);
  } catch (err) {
    if (err instanceof Refused) return reply({ kind: 'error', error: err.error });
    throw err;
  }
}
