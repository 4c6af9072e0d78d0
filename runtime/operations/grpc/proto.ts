import { grpcSchemaOf } from '../../grpc/schema.js';
import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED } from '../contract/index.js';
import { DISCOVERY_TAG } from '../control/document-schemas.js';

/**
 * `GET /grpc/proto/service-app.proto` (CONTRACT: gRPC): the caller project's
 * proto3 file, generated once per publication. Readable by any caller of the
 * project, like the SDL and the OpenAPI document: it describes operations, not data.
 */
export const GRPC_PROTO_SPEC: DeclaredSpec = {
  id: 'Discovery.Grpc.Proto', authn: 'user', scope: 'project', grants: noGrants,
  contract: {
    tag: DISCOVERY_TAG, summary: 'The project\'s gRPC service (serving publication) as a proto3 file',
    routes: [{ method: 'GET', path: 'grpc/proto/service-app.proto' }], output: { status: 200, mediaType: 'text/plain' },
    errors: [400, 401, 404], metering: CONTROL_PLANE_UNMETERED, stability: 'stable',
  },
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
