import { grpcSchemaOf } from '../../grpc/schema.js';
import { noGrants, type OperationSpec } from '../types.js';

/**
 * `GET /grpc/proto/service-app.proto` (CONTRACT: gRPC): the caller project's
 * proto3 file, generated once per publication. Readable by any caller of the
 * project, like the SDL and the OpenAPI document: it describes operations, not data.
 */
export const GRPC_PROTO_SPEC: OperationSpec = {
  id: 'Discovery.Grpc.Proto', authn: 'user', scope: 'project', grants: noGrants,
  execute: async (ctx) => {
    const schema = await grpcSchemaOf(ctx.services.db, ctx.scope!.publication);
    return { status: 200, body: schema.text, headers: { 'Content-Type': 'text/plain; charset=utf-8' } };
  },
};

/** gRPC server reflection's view of the caller's project: its gRPC schema (answered by adapters/grpc/reflection.ts). */
export const GRPC_REFLECT_SPEC: OperationSpec = {
  id: 'Discovery.Grpc.Reflection', authn: 'user', scope: 'project', grants: noGrants,
  evidence: 'failures',
  execute: async (ctx) => ({ status: 200, body: await grpcSchemaOf(ctx.services.db, ctx.scope!.publication) }),
};
