import {
  execute, GraphQLError, GraphQLNonNull, GraphQLObjectType,
  type DocumentNode, type ExecutionResult, type FieldNode, type OperationDefinitionNode, type GraphQLFieldResolver, type GraphQLFormattedError, type GraphQLOutputType,
} from 'graphql';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { PageResult, ShapedRow } from '../entities/shape.js';
import { MASKED } from '../entities/shape.js';
import { toErrorEnvelope } from '../errors/envelope.js';
import { maskError } from '../errors/mask.js';
import { ServiceError } from '../errors/service-error.js';
import type { EntityOperationKind } from '../publication/operations.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import type { Invocation, OperationContext, Result } from '../operations/types.js';
import { ENTITY_SPECS } from '../operations/entity/index.js';
import { AUTHORED_OPERATION_SPEC } from '../operations/authored/spec.js';
import type { AuthoredOperation } from '../publication/authored-operations.js';
import { checkRequest, formatDocumentErrors, graphqlBodyOf, type GraphQLBody } from './request-document.js';
import { entityTypeNames, GRAPHQL_ROOT_FIELDS, GRAPHQL_ROOT_KINDS, type GraphQLRootKind } from './names.js';
import { graphqlSchemaOf } from './schema.js';
import { collectFields, namedType, pageShapeOf, rowShapeOf, type SelectionContext } from './selection.js';
import { executeQuery, type Resolve } from './complete.js';
import { DEFAULT_GRAPHQL_REQUEST_TIMEOUT_MS, RequestBudget, rootSlotsFor } from './request-budget.js';

/**
 * The operation a root field dispatches (its REST twin) and how it reads the
 * field. Root fields run through dispatch() one by one, each with the same
 * grants, row policy, masks, quotas, audit row and reason codes as REST.
 */
type RootKind = GraphQLRootKind;
interface RootField {
  entity: CompiledEntity;
  kind: RootKind;
}

/** What a GraphQL request is executed with: the publication's schema, documents and root fields. */
interface PublicationExecutor {
  roots: Map<string, RootField>;
  /** Object types that are connections or edges (resolved from PageResult), by name. */
  connections: Set<string>;
  edges: Set<string>;
  /** Mutation fields of authored operations, and their `<Name>Result` types (schema.ts). */
  operations: ReadonlyMap<string, AuthoredOperation>;
  operationResults: ReadonlySet<string>;
}

/** Dispatches one root field's operation (runtime/dispatch.ts, passed in to keep this module below it). */
export type DispatchField = (inv: Invocation) => Promise<{ ok: true; result: Result } | { ok: false; error: ServiceError }>;

interface RequestContext {
  ctx: OperationContext;
  dispatch: DispatchField;
  roots: Map<string, RootField>;
  operations: ReadonlyMap<string, AuthoredOperation>;
  sc: SelectionContext;
  /** The request's time bound, client abort and root-field slots. */
  budget: RequestBudget;
}

const KIND_OPERATION: Record<RootKind, EntityOperationKind> = GRAPHQL_ROOT_KINDS;

function executorOf(pub: CompiledPublication): PublicationExecutor {
  return pub.derive('graphql-executor', () => {
    const { schema, operations, operationResults } = graphqlSchemaOf(pub);
    const roots = new Map<string, RootField>();
    const connections = new Set<string>();
    const edges = new Set<string>();
    for (const entity of pub.entities.values()) {
      if (schema.getType(entity.entityName) === undefined) continue; // left out of the schema (name collision)
      const n = entityTypeNames(entity.entityName);
      for (const kind of Object.keys(GRAPHQL_ROOT_KINDS) as RootKind[]) roots.set(n[GRAPHQL_ROOT_FIELDS[kind]], { entity, kind });
      connections.add(n.connection);
      edges.add(n.edge);
    }
    return { roots, connections, edges, operations, operationResults };
  });
}

/** A GraphQL error carrying the envelope's code, reasonCode and correlationId (CONTRACT: GraphQL errors). */
export function graphqlErrorOf(err: ServiceError, correlationId: string): GraphQLError {
  const e = toErrorEnvelope(err, correlationId).error;
  const extensions: Record<string, unknown> = { code: e.code, reasonCode: e.reasonCode, correlationId };
  if (e.field !== undefined) extensions.field = e.field;
  if (e.missingGrants !== undefined) extensions.missingGrants = e.missingGrants;
  if (err.retryable) extensions.retryable = true;
  if (e.explainUrl !== undefined) extensions.explainUrl = e.explainUrl;
  return new GraphQLError(err.message, { extensions });
}

/**
 * Executes a GraphQL request for the caller of `ctx` (already authenticated
 * and scoped by the GraphQL.Request operation): the document from the
 * publication's cache, the limits, then graphql-js's executor with root
 * fields that dispatch and nested fields that read what the root's one SQL
 * statement returned.
 */
export async function executeGraphQL(ctx: OperationContext, dispatch: DispatchField): Promise<Result> {
  const correlationId = ctx.inv.correlationId;
  const body = graphqlBodyOf(ctx.inv.body);
  const pub = ctx.scope!.publication;
  const ex = executorOf(pub);
  const checked = checkRequest(pub, body);
  if (!checked.ok) return { status: 400, body: { errors: formatDocumentErrors(checked, correlationId) } };
  const { op, sc } = checked;
  if (op.operation === 'subscription') {
    return { status: 400, body: { errors: formatDocumentErrors({ ok: false, errors: [new GraphQLError('subscriptions run over graphql-ws (WebSocket) on this path, not over HTTP POST')], reasonCode: 'GraphQL.SubscriptionOverHttp' }, correlationId) } };
  }
  const services = ctx.services;
  const budget = new RequestBudget(services.limits.graphqlRequestTimeoutMs ?? DEFAULT_GRAPHQL_REQUEST_TIMEOUT_MS, rootSlotsFor(services.db.connections), services.db.backend === 'pglite', ctx.inv.signal);
  try {
    return await run(ctx, { ctx, dispatch, roots: ex.roots, operations: ex.operations, sc, budget }, ex, checked.document, op, body);
  } finally {
    budget.end();
  }
}

/** The checked operation, executed within the request's budget. */
async function run(ctx: OperationContext, rc: RequestContext, ex: PublicationExecutor, document: DocumentNode, op: OperationDefinitionNode, body: GraphQLBody): Promise<Result> {
  const { schema } = graphqlSchemaOf(ctx.scope!.publication);
  const { sc } = rc;
  const correlationId = ctx.inv.correlationId;
  const resolver = fieldResolver(ex);
  // Queries without introspection complete the planned results directly (complete.ts); mutations
  // (serial root fields) and introspection go through graphql-js's executor with the same resolver.
  const planned = op.operation === 'query' && ![...collectFields([op.selectionSet], sc).values()].some((n) => n[0]!.name.value === '__schema' || n[0]!.name.value === '__type');
  const result = planned
    ? await executeQuery(schema, op, sc, rc, resolver as unknown as Resolve<RequestContext>)
    : ((await execute({
      schema, document, operationName: body.operationName, variableValues: body.variables, contextValue: rc, rootValue: {},
      fieldResolver: resolver,
    })) as ExecutionResult);
  return { status: 200, body: formatResult(result, correlationId) };
}

function formatResult(result: ExecutionResult, correlationId: string): Record<string, unknown> {
  const out: Record<string, unknown> = { data: result.data ?? null };
  if (result.errors !== undefined && result.errors.length > 0) {
    out.errors = result.errors.map((e): GraphQLFormattedError => {
      const f = e.toJSON();
      // graphql-js's own execution errors (a null in a non-null field) carry no code: they are internal.
      const extensions = f.extensions?.code === undefined ? { code: 'INTERNAL', reasonCode: 'GraphQL.ExecutionFailed', correlationId } : f.extensions;
      return { ...f, extensions };
    });
  }
  return out;
}

const PAGE_INFO = 'PageInfo';

/** One resolver for every field: roots dispatch; the rest read the shaped results by response key. */
function fieldResolver(ex: PublicationExecutor): GraphQLFieldResolver<unknown, RequestContext> {
  return (source, args, rc, info) => {
    const parent = info.parentType.name;
    if (info.path.prev === undefined) return resolveRoot(rc, info.fieldName, args, info.fieldNodes, info.returnType);
    if (ex.connections.has(parent)) {
      const page = source as PageResult;
      if (info.fieldName === 'edges') return page.rows.map((node, i) => ({ node, cursor: page.cursors?.[i] ?? '' }));
      if (info.fieldName === 'totalCount') return page.totalCount ?? 0;
      if (info.fieldName === 'pageInfo') {
        const c = page.cursors;
        return { hasNextPage: page.hasNextPage, hasPreviousPage: page.hasPreviousPage, startCursor: c?.[0] ?? null, endCursor: c === null || c.length === 0 ? null : c[c.length - 1] };
      }
      return null;
    }
    // An operation's result: its return value's members by field name (the output schema was checked by the operation).
    if (ex.operationResults.has(parent)) return (source as Record<string, unknown>)[info.fieldName] ?? null;
    if (ex.edges.has(parent) || parent === PAGE_INFO || parent === 'DeleteResult') return (source as Record<string, unknown>)[info.fieldName];
    // An entity row: values by response key; a masked column is absent.
    const row = source as ShapedRow;
    const v = row[info.path.key as string];
    if (v !== undefined) return v;
    if (!(info.returnType instanceof GraphQLNonNull)) return null;
    const masked = row[MASKED]?.has(info.path.key as string) === true;
    return new GraphQLError(masked ? `field '${info.fieldName}' is not readable` : `field '${info.fieldName}' has no value`, {
      extensions: { code: 'ACCESS_DENIED', reasonCode: 'Access.FieldMasked', correlationId: rc.ctx.inv.correlationId },
    });
  };
}

const EMPTY_QUERY: ReadonlyMap<string, string> = new Map();

const dataOf = (result: Result): unknown => (result.body as { data?: unknown } | undefined)?.data ?? null;

async function resolveRoot(rc: RequestContext, fieldName: string, args: Record<string, unknown>, nodes: readonly FieldNode[], returnType: GraphQLOutputType): Promise<unknown> {
  const root = rc.roots.get(fieldName);
  if (root === undefined) {
    const op = rc.operations.get(fieldName);
    return op === undefined ? null : resolveOperation(rc, op, args); // else `_empty`
  }
  const { entity, kind } = root;
  const type = namedType(returnType) as GraphQLObjectType;
  const correlationId = rc.ctx.inv.correlationId;
  try {
    switch (kind) {
      case 'list':
        return dataOf(await dispatchOne(rc, entity, kind, { read: { page: pageShapeOf(entity, type, args, nodes, rc.sc) } }));
      case 'one':
        return dataOf(await dispatchOne(rc, entity, kind, { params: { id: String(args.id) }, read: { row: rowShapeOf(entity, type, nodes, rc.sc) } }));
      case 'create': {
        const written = await dispatchOne(rc, entity, kind, { body: args.input, idempotencyKey: rc.ctx.inv.idempotencyKey });
        return shapeWritten(rc, entity, type, nodes, dataOf(written) as Record<string, unknown>);
      }
      case 'update': {
        const written = await dispatchOne(rc, entity, kind, { params: { id: String(args.id) }, body: args.input, ifMatch: (args.ifMatch as string | null | undefined) ?? null });
        return shapeWritten(rc, entity, type, nodes, dataOf(written) as Record<string, unknown>);
      }
      case 'delete': {
        const id = String(args.id);
        await dispatchOne(rc, entity, kind, { params: { id } });
        return { id, deleted: true };
      }
    }
  } catch (err) {
    throw graphqlErrorOf(ServiceError.is(err) ? err : maskError(err, correlationId, rc.ctx.services.log), correlationId);
  }
}

/**
 * A mutation's answer in the selection's shape. Columns come from the
 * written row (masked ones already dropped by the write path); a selection
 * that follows relations re-reads the row through a dispatched Read, so the
 * related rows pass the caller's grants and policy like any read.
 */
async function shapeWritten(rc: RequestContext, entity: CompiledEntity, type: GraphQLObjectType, nodes: readonly FieldNode[], row: Record<string, unknown>): Promise<unknown> {
  const shape = rowShapeOf(entity, type, nodes, rc.sc);
  if (shape.toOne.size > 0 || shape.toMany.size > 0) {
    return dataOf(await dispatchOne(rc, entity, 'one', { params: { id: String(row.id) }, read: { row: shape } }));
  }
  const out: ShapedRow = {};
  for (const [key, col] of shape.columns) out[key] = row[col];
  return out;
}

/**
 * An authored operation's mutation (CONTRACT "Operations"): dispatched
 * through AUTHORED_OPERATION_SPEC as its REST route is (`id` the row of an
 * instance operation, `input` the body, the request's Idempotency-Key), so
 * grants, validation, limits and audit are REST's; a refusal is a GraphQL
 * error with the envelope's code and reasonCode, like any root field's.
 */
async function resolveOperation(rc: RequestContext, op: AuthoredOperation, args: Record<string, unknown>): Promise<unknown> {
  const correlationId = rc.ctx.inv.correlationId;
  try {
    const params: Record<string, string> = { operation: op.name };
    if (op.entity !== null) params.id = String(args.id);
    return dataOf(await dispatchInvocation(rc, {
      operation: AUTHORED_OPERATION_SPEC, collection: op.collection, params, body: plain(args.input), idempotencyKey: rc.ctx.inv.idempotencyKey, bindingId: `graphql:${op.capabilityId}`,
    }));
  } catch (err) {
    throw graphqlErrorOf(ServiceError.is(err) ? err : maskError(err, correlationId, rc.ctx.services.log), correlationId);
  }
}

/** graphql-js coerces input objects with a null prototype: the operation gets the body REST would, plain JSON. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = plain(x);
  return out;
}

/** One root field as its REST twin's operation, through dispatch(): a failure comes back as its ServiceError. */
function dispatchOne(rc: RequestContext, entity: CompiledEntity, kind: RootKind, extra: Partial<Invocation>): Promise<Result> {
  return dispatchInvocation(rc, { operation: ENTITY_SPECS[KIND_OPERATION[kind]], collection: entity.collection, ...extra });
}

async function dispatchInvocation(rc: RequestContext, extra: Pick<Invocation, 'operation' | 'collection'> & Partial<Invocation>): Promise<Result> {
  const base = rc.ctx.inv;
  const inv: Invocation = {
    correlationId: base.correlationId, protocol: 'graphql', relation: null,
    params: {}, query: EMPTY_QUERY, body: undefined, bearer: base.bearer, tenantHeader: base.tenantHeader, projectHeader: base.projectHeader,
    branchHeader: base.branchHeader, idempotencyKey: null, ifMatch: null, basePath: base.basePath, clientAddress: base.clientAddress ?? null,
    // Stage 1 ran for the request (GraphQL.Request): the root field keeps its actor instead of verifying the token again.
    authenticated: rc.ctx.actor,
    ...extra,
  };
  const out = await rc.budget.run(() => rc.dispatch({ ...inv, signal: rc.budget.signal }));
  if (!out.ok) throw out.error;
  return out.result;
}
