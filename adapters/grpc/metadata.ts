import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Invocation, OperationSpec } from '../../runtime/operations/types.js';
import type { GrpcStatus } from '../../runtime/grpc/status.js';
import { bearerOf } from '../rest/request-meta.js';

const EMPTY_QUERY: ReadonlyMap<string, string> = new Map();

/** A text metadata value; binary (`-bin`) or repeated values are not credentials. */
function text(md: grpc.Metadata, key: string): string | null {
  const values = md.get(key);
  if (values.length !== 1 || typeof values[0] !== 'string') return null;
  return values[0];
}

/** `ipv4:127.0.0.1:5123`, `[::1]:5123` or `127.0.0.1:5123` → the address (login throttling and audit count by it). */
export function peerAddress(peer: string): string | null {
  const bare = peer.replace(/^ipv[46]:/, '');
  const v6 = /^\[([^\]]+)\]:\d+$/.exec(bare);
  if (v6 !== null) return v6[1]!;
  const i = bare.lastIndexOf(':');
  return i > 0 ? bare.slice(0, i) : bare || null;
}

/**
 * The call's metadata as an Invocation (spec: gRPC metadata keys
 * `authorization`, `x-service-tenant`, `x-service-project`, plus
 * `x-service-branch` as REST's header). A missing or malformed value is
 * absent: the pipeline then refuses the call as REST would the request.
 */
export function invocationOf(spec: OperationSpec, md: grpc.Metadata, peer: string, body: unknown): Invocation {
  const authorization = text(md, 'authorization');
  return {
    correlationId: randomUUID(), protocol: 'grpc', operation: spec, collection: null, relation: null,
    params: {}, query: EMPTY_QUERY, body,
    bearer: authorization === null ? null : bearerOf(authorization),
    tenantHeader: text(md, 'x-service-tenant'), projectHeader: text(md, 'x-service-project'), branchHeader: text(md, 'x-service-branch'),
    idempotencyKey: null, ifMatch: null, basePath: '/api', clientAddress: peerAddress(peer),
  };
}

export function metadataOf(values: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(values)) md.set(k, v);
  return md;
}

/** A status as grpc-js ends a call with it. */
export const serviceErrorOf = (s: GrpcStatus): grpc.ServerErrorResponse & { code: number; details: string; metadata: grpc.Metadata } => ({
  name: 'ServiceError', message: s.details, code: s.code, details: s.details, metadata: metadataOf(s.trailers),
});
