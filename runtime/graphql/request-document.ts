import { getOperationAST, getVariableValues, GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { validationFailed } from '../errors/service-error.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import { DocumentCache } from './documents.js';
import { costOf, GRAPHQL_LIMITS, rootFieldCount } from './limits.js';
import { graphqlSchemaOf } from './schema.js';
import type { SelectionContext } from './selection.js';

/** A GraphQL request's body, over HTTP (`POST /graphql`) or in a graphql-ws `subscribe` payload. */
export interface GraphQLBody {
  query: string;
  variables: Record<string, unknown>;
  operationName: string | null;
}

export function graphqlBodyOf(raw: unknown): GraphQLBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw validationFailed('GraphQL.InvalidRequest', 'the body must be { query, variables?, operationName? }', 'query');
  const { query, variables, operationName } = raw as Record<string, unknown>;
  if (typeof query !== 'string' || query.trim() === '') throw validationFailed('GraphQL.InvalidRequest', 'query must be a non-empty string', 'query');
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    throw validationFailed('GraphQL.InvalidRequest', 'variables must be an object', 'variables');
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    throw validationFailed('GraphQL.InvalidRequest', 'operationName must be a string', 'operationName');
  }
  return { query, variables: (variables ?? {}) as Record<string, unknown>, operationName: (operationName as string | null | undefined) ?? null };
}

/** A document ready to execute: parsed, validated, its operation chosen, variables coerced, within the limits. */
export interface CheckedRequest {
  ok: true;
  document: DocumentNode;
  op: OperationDefinitionNode;
  /** Fragments and coerced variables, for reading the selection. */
  sc: SelectionContext;
}

/** Why a document cannot execute: VALIDATION_FAILED errors and the reasonCode they carry. */
export interface DocumentFailure {
  ok: false;
  errors: readonly GraphQLError[];
  reasonCode: string;
}

/** The publication's parsed and validated documents (kept with it, dropped with it). */
const cacheOf = (pub: CompiledPublication): DocumentCache => pub.derive('graphql-documents', () => new DocumentCache(graphqlSchemaOf(pub).schema));

const failure = (message: string, reasonCode: string): DocumentFailure => ({ ok: false, errors: [new GraphQLError(message)], reasonCode });

/**
 * Everything checked before a GraphQL operation executes (CONTRACT: GraphQL
 * errors and limits): the cached parse and validation, the operation named
 * by `operationName`, the variables' coercion, then root fields, depth and
 * complexity (limits.ts; aliases are bounded with the parse, documents.ts).
 * The same check for HTTP and for graphql-ws, so both refuse alike.
 */
export function checkRequest(pub: CompiledPublication, body: GraphQLBody): CheckedRequest | DocumentFailure {
  const { schema } = graphqlSchemaOf(pub);
  const checked = cacheOf(pub).get(body.query);
  if (!checked.ok) return checked;
  const document = checked.document;
  const op = getOperationAST(document, body.operationName);
  if (op === null || op === undefined) {
    return failure(body.operationName === null ? 'the document has several operations: name one in operationName' : `no operation named '${body.operationName}'`, 'GraphQL.UnknownOperation');
  }
  const coerced = getVariableValues(schema, op.variableDefinitions ?? [], body.variables);
  if (coerced.errors !== undefined) return { ok: false, errors: coerced.errors, reasonCode: 'GraphQL.InvalidVariables' };
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const sc: SelectionContext = { fragments, variables: coerced.coerced };
  const roots = rootFieldCount(op, sc);
  if (roots > GRAPHQL_LIMITS.maxRootFields) return failure(`the operation has ${roots} root fields; at most ${GRAPHQL_LIMITS.maxRootFields}`, 'GraphQL.TooManyRootFields');
  const cost = costOf(schema, op, sc);
  if (cost.depth > GRAPHQL_LIMITS.maxDepth) return failure(`query depth ${cost.depth} exceeds ${GRAPHQL_LIMITS.maxDepth}`, 'GraphQL.DepthExceeded');
  if (cost.complexity > GRAPHQL_LIMITS.maxComplexity) return failure(`query complexity ${cost.complexity} exceeds ${GRAPHQL_LIMITS.maxComplexity}`, 'GraphQL.ComplexityExceeded');
  return { ok: true, document, op, sc };
}

/** Document errors carrying VALIDATION_FAILED, the reasonCode and the correlationId (their locations kept). */
export function documentErrorsOf(f: DocumentFailure, correlationId: string): GraphQLError[] {
  return f.errors.map((e) => new GraphQLError(e.message, {
    nodes: e.nodes, source: e.source, positions: e.positions, extensions: { code: 'VALIDATION_FAILED', reasonCode: f.reasonCode, correlationId },
  }));
}

/** The same errors as GraphQL serializes them (`{ message, locations?, extensions }`). */
export const formatDocumentErrors = (f: DocumentFailure, correlationId: string): unknown[] => documentErrorsOf(f, correlationId).map((e) => e.toJSON());
