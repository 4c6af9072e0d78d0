import { printSchema } from 'graphql';
import { graphqlSchemaOf } from '../../graphql/schema.js';
import { noGrants, type OperationSpec } from '../types.js';

/**
 * `GET /graphql/schema` (CONTRACT: GraphQL): the caller project's SDL as text,
 * printed once per publication. Readable by any caller of the project, like
 * the OpenAPI document: it describes operations, not data.
 */
export const GRAPHQL_SCHEMA_SPEC: OperationSpec = {
  id: 'Discovery.GraphQL.Schema', authn: 'user', scope: 'project', grants: noGrants,
  execute: async (ctx) => {
    const pub = ctx.scope!.publication;
    const sdl = pub.derive('graphql-sdl', () => printSchema(graphqlSchemaOf(pub).schema));
    return { status: 200, body: sdl, headers: { 'Content-Type': 'text/plain; charset=utf-8' } };
  },
};
