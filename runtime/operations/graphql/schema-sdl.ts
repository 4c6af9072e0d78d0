import { printSchema } from 'graphql';
import { graphqlSchemaOf } from '../../graphql/schema.js';
import { noGrants, type DeclaredSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED } from '../contract/index.js';
import { DISCOVERY_TAG } from '../control/document-schemas.js';

/**
 * `GET /graphql/schema` (CONTRACT: GraphQL): the caller project's SDL as text,
 * printed once per publication. Readable by any caller of the project, like
 * the OpenAPI document: it describes operations, not data.
 */
export const GRAPHQL_SCHEMA_SPEC: DeclaredSpec = {
  id: 'Discovery.GraphQL.Schema', authn: 'user', scope: 'project', grants: noGrants,
  contract: {
    tag: DISCOVERY_TAG, summary: 'The project\'s GraphQL schema (serving publication) as SDL text',
    routes: [{ method: 'GET', path: 'graphql/schema' }], output: { status: 200, mediaType: 'text/plain' },
    errors: [400, 401, 404], metering: CONTROL_PLANE_UNMETERED, stability: 'stable',
  },
  execute: async (ctx) => {
    const pub = ctx.scope!.publication;
    const sdl = pub.derive('graphql-sdl', () => printSchema(graphqlSchemaOf(pub).schema));
    return { status: 200, body: sdl, headers: { 'Content-Type': 'text/plain; charset=utf-8' } };
  },
};
