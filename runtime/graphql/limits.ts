import {
  GraphQLObjectType, type FieldNode, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import { argumentsOf, collectFields, namedType, type SelectionContext } from './selection.js';

/** CONTRACT: GraphQL — checked before anything executes, mutations included. */
export const GRAPHQL_LIMITS = {
  maxDepth: 12,
  maxComplexity: 10_000,
  /** A connection without first/last is charged as a page of this many rows (the default page size). */
  defaultPage: 50,
} as const;

export interface Cost {
  depth: number;
  complexity: number;
}

/**
 * Depth and complexity of an operation: every field costs 1; a connection
 * field (one with `first`/`last` arguments) multiplies the cost of its
 * selection by its `first`/`last` (default 50). Fragments count where they
 * are spread. Introspection (`__schema`, `__type`) is exempt: graphql-js's
 * own introspection query is deeper than 12.
 */
export function costOf(schema: GraphQLSchema, op: OperationDefinitionNode, sc: SelectionContext): Cost {
  const root = op.operation === 'mutation' ? schema.getMutationType() : op.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  if (root === null || root === undefined) return { depth: 0, complexity: 0 };
  let depth = 0;
  const walk = (type: GraphQLObjectType, nodes: readonly FieldNode[], level: number): number => {
    let cost = 0;
    const defs = type.getFields();
    for (const [, fieldNodes] of collectFields(nodes.map((n) => n.selectionSet), sc)) {
      const name = fieldNodes[0]!.name.value;
      if (name === '__schema' || name === '__type' || name === '__typename') continue;
      const def = defs[name];
      if (def === undefined) continue;
      depth = Math.max(depth, level);
      const named = namedType(def.type);
      let inner = 0;
      if (named instanceof GraphQLObjectType) inner = walk(named, fieldNodes, level + 1);
      let factor = 1;
      if (def.args.some((a) => a.name === 'first')) {
        const args = argumentsOf(def, fieldNodes[0]!, sc);
        const n = (args.first ?? args.last ?? GRAPHQL_LIMITS.defaultPage) as number;
        factor = Math.max(0, n);
      }
      cost += 1 + factor * inner;
    }
    return cost;
  };
  // The operation itself is the parent of its root fields (depth 1).
  const complexity = walk(root, [{ kind: 'Field', name: { kind: 'Name', value: '' }, selectionSet: op.selectionSet } as FieldNode], 1);
  return { depth, complexity };
}
