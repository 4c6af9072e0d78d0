import { validationFailed } from '../errors/service-error.js';
import { AUTHORED_OPERATION_SPEC } from '../operations/authored/spec.js';
import type { Invocation, OperationContext, Result } from '../operations/types.js';
import type { AuthoredOperation } from '../publication/authored-operations.js';
import { decodeMessage, encodeMessage } from './decode.js';
import { Refused } from './entity-call.js';
import type { DispatchFn } from './exchange.js';
import type { GrpcSchema } from './schema.js';
import { jsonOfValue, valueOfJson, type Message } from './values.js';

const EMPTY_QUERY: ReadonlyMap<string, string> = new Map();

export const operationBindingId = (op: AuthoredOperation): string => `grpc:${op.capabilityId}`;

/** A google.protobuf.Struct → its JSON object; too deep a nesting is INVALID_ARGUMENT. */
function jsonOfStruct(schema: GrpcSchema, bytes: Uint8Array): Record<string, unknown> {
  const struct = decodeMessage(schema.struct, bytes);
  const json = jsonOfValue({ structValue: struct });
  if (json === undefined) throw validationFailed('Grpc.MalformedMessage', 'the request Struct is nested too deeply');
  return json as Record<string, unknown>;
}

/**
 * The answer as a Struct. A Struct holds an object only: any other return
 * value (a string, a number, a list, null) is wrapped as `{ value: <it> }`
 * (docs/grpc.md "Authored operations"); an object is the Struct itself.
 */
export function structOfAnswer(value: unknown): Message {
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value };
  return valueOfJson(object).structValue as Message;
}

/**
 * One authored operation's method (CONTRACT "Operations"): the request
 * Struct is `{ id, input }` for an instance operation (`id` a string) and
 * the input itself for a project operation; the operation is dispatched
 * through AUTHORED_OPERATION_SPEC as REST's route is (grants, validation,
 * limits, audit), and its return value answers as a Struct. A refusal comes
 * back as a Refused (the operation's own audit row exists).
 */
export async function runOperation(ctx: OperationContext, dispatch: DispatchFn, schema: GrpcSchema, op: AuthoredOperation, request: Uint8Array): Promise<Uint8Array> {
  const json = jsonOfStruct(schema, request);
  let params: Record<string, string> = { operation: op.name };
  let body: unknown = json;
  if (op.entity !== null) {
    for (const k of Object.keys(json)) if (k !== 'id' && k !== 'input') throw validationFailed('Grpc.InvalidRequest', `unknown request key '${k.slice(0, 100)}': an instance operation takes { id, input }`, k.slice(0, 100));
    if (typeof json.id !== 'string' || json.id === '') throw validationFailed('Grpc.InvalidRequest', 'id must be a non-empty string', 'id');
    params = { ...params, id: json.id };
    body = json.input;
  }
  const base = ctx.inv;
  const inv: Invocation = {
    correlationId: base.correlationId, protocol: 'grpc', operation: AUTHORED_OPERATION_SPEC, collection: op.collection, relation: null,
    params, query: EMPTY_QUERY, body, bearer: base.bearer, tenantHeader: base.tenantHeader, projectHeader: base.projectHeader,
    branchHeader: base.branchHeader, idempotencyKey: null, ifMatch: null, basePath: base.basePath, clientAddress: base.clientAddress ?? null,
    authenticated: ctx.actor, bindingId: operationBindingId(op),
  };
  const out = await dispatch(inv);
  if (!out.ok) throw new Refused(out.error);
  return encodeMessage(schema.struct, structOfAnswer(dataOf(out.result)));
}

const dataOf = (result: Result): unknown => (result.body as { data?: unknown } | undefined)?.data ?? null;
