/**
 * The GraphQL endpoint's tag and JSON shapes (CONTRACT: GraphQL; docs/graphql.md):
 * the request body as documentation only, and the answer `{ data, errors? }`.
 */
import { defineSchemas, ref, type TagDecl } from '../contract/index.js';

export const GRAPHQL_TAG: TagDecl = { name: 'GraphQL', description: 'The GraphQL endpoint of the project (docs/graphql.md) and its development playground.' };

export const GRAPHQL_SCHEMAS = defineSchemas({
  /**
   * Annotations only, no constraint: the request is checked by GraphQL's own
   * reading of the body (runtime/graphql/), which answers 400 in GraphQL's
   * shape with its own reason codes; a schema constraint here would answer
   * 422 in REST's envelope instead.
   */
  GraphQLRequest: {
    description: 'A JSON object `{ query, variables?, operationName? }`; anything else answers 400 `VALIDATION_FAILED` in GraphQL\'s shape.',
    properties: {
      query: { description: 'The GraphQL document (a string).' },
      variables: { description: 'Values of the document\'s variables (an object or null).' },
      operationName: { description: 'Which operation of the document to run when it has several (a string or null).' },
    },
  },
  GraphQLError: {
    type: 'object', required: ['message'],
    properties: {
      message: { type: 'string' },
      locations: { type: 'array', items: { type: 'object', properties: { line: { type: 'integer' }, column: { type: 'integer' } } } },
      path: { type: 'array', items: { type: ['string', 'integer'] } },
      extensions: {
        type: 'object',
        description: '`code`, `reasonCode`, `correlationId` (the `X-Service-Correlation-Id` header\'s value), plus `field`, `missingGrants`, `retryable` and `explainUrl` where REST\'s envelope has them.',
        properties: {
          code: { type: 'string' }, reasonCode: { type: 'string' }, correlationId: { type: 'string' }, field: { type: 'string' },
          missingGrants: { type: 'array', items: { type: 'string' } }, retryable: { type: 'boolean' }, explainUrl: { type: 'string' },
        },
      },
    },
  },
  GraphQLResponse: {
    type: 'object',
    description: 'Execution errors answer 200 with `data` (nulls where a field failed) and `errors`. Document errors and an unreadable body answer 400, no or a bad credential 401, both as `{ errors }` in this shape (not REST\'s error envelope).',
    properties: {
      data: { type: ['object', 'null'], description: 'The selection\'s result; null when nothing ran.' },
      errors: { type: 'array', items: ref('GraphQLError') },
      extensions: { type: 'object' },
    },
  },
});
