import { executeSync, getArgumentValues, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import { dispatch } from '../../dispatch.js';
import { graphqlErrorOf } from '../../graphql/execute.js';
import { entityTypeNames } from '../../graphql/names.js';
import { checkRequest, documentErrorsOf, graphqlBodyOf } from '../../graphql/request-document.js';
import { graphqlSchemaOf } from '../../graphql/schema.js';
import { collectFields } from '../../graphql/selection.js';
import type { CompiledPublication } from '../../publication/compiled-publication.js';
import type { ChangeNotice, PreparedSubscription } from '../../realtime/hub.js';
import { REALTIME_SPECS } from '../realtime/index.js';
import { noGrants, type OperationSpec, type Result } from '../types.js';

/** What a graphql-ws `subscribe` message turned out to be. */
export type GraphQLSocketOperation =
  /** Refused before anything runs (document errors) or by the subscription's authority: sent as the graphql-ws `error` message. */
  | { kind: 'errors'; errors: GraphQLError[] }
  /** A query or mutation: executed as `POST /graphql` would, its result one `next` message. */
  | { kind: 'operation'; schema: GraphQLSchema; document: DocumentNode }
  /** `<entity>Changed`: authorized, its quota slot reserved; the adapter attaches `prepared` to the hub. */
  | { kind: 'subscription'; schema: GraphQLSchema; document: DocumentNode; prepared: PreparedSubscription; render: (change: ChangeNotice) => ExecutionResult };

/** `<entity>Changed` root fields of a publication's schema, by field name. */
const changedFieldsOf = (pub: CompiledPublication): Map<string, CompiledEntity> => pub.derive('graphql-changed-fields', () => {
  const { schema } = graphqlSchemaOf(pub);
  const fields = schema.getSubscriptionType()?.getFields() ?? {};
  const out = new Map<string, CompiledEntity>();
  for (const e of pub.entities.values()) {
    const name = entityTypeNames(e.entityName).changedField;
    if (fields[name] !== undefined) out.set(name, e);
  }
  return out;
});

const answer = (op: GraphQLSocketOperation): Result => ({ status: 200, body: op });

/**
 * A graphql-ws `subscribe` message (CONTRACT: GraphQL subscriptions). It
 * authenticates, pins the publication and checks the document exactly as
 * `POST /graphql` does, granting nothing itself; an `<entity>Changed`
 * subscription is then dispatched as its realtime twin, `Realtime.Subscribe`
 * with `protocol: 'graphql'`, so grants, row policy, masks, the filter's
 * rules and the realtime quota are those of `/api/realtime`. Each change is
 * rendered with graphql-js against the subscription's own selection: names
 * only, never values.
 */
export const GRAPHQL_SUBSCRIBE_SPEC: OperationSpec = {
  id: 'GraphQL.Subscribe', authn: 'user', scope: 'project', grants: noGrants,
  errorShape: 'graphql',
  // The twin's row is the decision: this operation leaves one only when it refuses by itself.
  evidence: 'failures',
  execute: async (ctx) => {
    const correlationId = ctx.inv.correlationId;
    const body = graphqlBodyOf(ctx.inv.body);
    const pub = ctx.scope!.publication;
    const { schema } = graphqlSchemaOf(pub);
    const checked = checkRequest(pub, body);
    if (!checked.ok) return answer({ kind: 'errors', errors: documentErrorsOf(checked, correlationId) });
    const { document, op, sc } = checked;
    if (op.operation !== 'subscription') return answer({ kind: 'operation', schema, document });
    // Validation leaves exactly one root field, never an introspection one.
    const [, nodes] = [...collectFields([op.selectionSet], sc)][0]!;
    const fieldName = nodes[0]!.name.value;
    const entity = changedFieldsOf(pub).get(fieldName)!;
    const { filter } = getArgumentValues(schema.getSubscriptionType()!.getFields()[fieldName]!, nodes[0]!, sc.variables);
    const twin = await dispatch({
      ...ctx.inv, protocol: 'graphql', operation: REALTIME_SPECS.subscribe, body: { entity: entity.entityName, filter: filter ?? null },
      // Stage 1 ran for this message: the twin keeps its actor instead of verifying the token again.
      authenticated: ctx.actor,
    }, ctx.services);
    if (!twin.ok) return answer({ kind: 'errors', errors: [graphqlErrorOf(twin.error, correlationId)] });
    const variableValues = body.variables;
    const render = (change: ChangeNotice): ExecutionResult =>
      executeSync({ schema, document, operationName: body.operationName, variableValues, rootValue: { [fieldName]: change } });
    return answer({ kind: 'subscription', schema, document, prepared: twin.result.body as PreparedSubscription, render });
  },
};

