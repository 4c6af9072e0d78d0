import { dispatch } from '../../dispatch.js';
import { executeGraphQL } from '../../graphql/execute.js';
import { noGrants, type DeclaredSpec } from '../types.js';
import { GRAPHQL_SCHEMAS as S, GRAPHQL_TAG } from './graphql-schemas.js';

/**
 * `POST /graphql` (CONTRACT: GraphQL). This operation authenticates the
 * caller and pins the project's publication, whose schema the document is
 * checked against; it grants nothing by itself. Each root field is then
 * dispatched as its REST twin (List, Read, Create, Update, Delete) with
 * `protocol: 'graphql'`, so authority, policy, quotas and audit are REST's.
 */
export const GRAPHQL_REQUEST_SPEC: DeclaredSpec = {
  id: 'GraphQL.Request', authn: 'user', scope: 'project', grants: noGrants,
  contract: {
    tag: GRAPHQL_TAG, summary: 'Run a GraphQL query or mutation (subscriptions run over graphql-ws on the same path)',
    description: 'Each root field is dispatched as its REST twin (List, Read, Create, Update, Delete), so grants, policy, quotas and audit are REST\'s. Errors answer in GraphQL\'s shape `{ errors }`, 400 for document errors and an unreadable body, 401 for no or a bad credential (docs/graphql.md).',
    routes: [{ method: 'POST', path: 'graphql' }],
    // Checked by GraphQL's own reading of the body (400 in its shape), so the schema only documents it (graphql-schemas.ts).
    body: S.GraphQLRequest, bodyOptional: true,
    output: { status: 200, body: S.GraphQLResponse },
    // Its refusals are in GraphQL's shape, which the shared error responses do not describe: the response's description says so.
    errors: [],
    metering: { unit: 'none', why: 'each root field is metered as the REST operation it dispatches' },
    stability: 'stable',
  },
  errorShape: 'graphql',
  evidence: 'failures',
  abortable: true,
  execute: (ctx) => executeGraphQL(ctx, (inv) => dispatch(inv, ctx.services)),
};
