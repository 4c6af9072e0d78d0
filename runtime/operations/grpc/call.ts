import { dispatch } from '../../dispatch.js';
import { runGrpcCall } from '../../grpc/call.js';
import { noGrants, type OperationSpec } from '../types.js';

/**
 * One gRPC call on an entity service (CONTRACT: gRPC). This operation
 * authenticates the caller from the call's metadata and pins the project's
 * publication, whose gRPC schema decodes the request; it grants nothing by
 * itself. Each method then dispatches its REST twin (Read, List, Create,
 * Update, Delete, BatchCreate; Watch as Realtime.Subscribe) with
 * `protocol: 'grpc'`, so authority, policy, quotas and audit are REST's.
 */
export const GRPC_CALL_SPEC: OperationSpec = {
  id: 'Grpc.Call', authn: 'user', scope: 'project', grants: noGrants,
  // The dispatched twins' rows are the decisions: this operation leaves one only when it refuses by itself.
  evidence: 'failures',
  execute: (ctx) => runGrpcCall(ctx, (inv) => dispatch(inv, ctx.services)),
};
