import { dispatch } from '../../dispatch.js';
import { executeGraphQL } from '../../graphql/execute.js';
import { noGrants, type OperationSpec } from '../types.js';

/**
 * `POST /graphql` (CONTRACT: GraphQL). This operation authenticates the
 * caller and pins the project's publication, whose schema the document is
 * checked against; it grants nothing by itself. Each root field is then
 * dispatched as its REST twin (List, Read, Create, Update, Delete) with
 * `protocol: 'graphql'`, so authority, policy, quotas and audit are REST's.
 */
export const GRAPHQL_REQUEST_SPEC: OperationSpec = {
  id: 'GraphQL.Request', authn: 'user', scope: 'project', grants: noGrants,
  errorShape: 'graphql',
  evidence: 'failures',
  abortable: true,
  execute: (ctx) => executeGraphQL(ctx, (inv) => dispatch(inv, ctx.services)),
};
