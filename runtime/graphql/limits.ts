import {
  GraphQLObjectType, Kind, visit, type DocumentNode, type FieldNode, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import { argumentsOf, collectFields, namedType, type SelectionContext } from './selection.js';

/** CONTRACT: GraphQL — checked before anything executes, mutations included (docs/graphql.md "Limits"). */
export const GRAPHQL_LIMITS = {
  maxDepth: 12,
  maxComplexity: 10_000,
  /** A connection without first/last is charged as a page of this many rows (the default page size). */
  defaultPage: 50,
  /**
   * What a `totalCount` adds to its connection: a count reads every row the
   * filter and row policy leave, however small the page, so it is priced
   * as 100 rows, once per connection (not per row of its own page), and
   * multiplied by the pages of the connections around it like any field.
   */
  totalCountCost: 100,
  /** Root fields (after fragments and `@skip`/`@include`): each one is a statement (or a write) of its own. */
  maxRootFields: 30,
  /** Aliases written in the document: the cheap way to repeat an expensive field. */
  maxAliases: 100,
} as const;

export interface Cost {
  depth: number;
  complexity: number;
}

const exempt = (name: string): boolean => name === '__schema' || name === '__type' || name === '__typename';

/**
 * Depth and complexity of an operation: every field costs 1; a connection
 * field (one with `first`/`last` arguments) multiplies the cost of its
 * selection by its `first`/`last` (default 50) — CONTRACT's rule — and,
 * added to it for what that rule did not price: a page of 0 is charged as
 * 1 (`first: 0` still runs the connection's query), and a selected
 * `totalCount` adds `totalCountCost` to its connection. Fragments count
 * where they are spread. Introspection (`__schema`, `__type`) is exempt:
 * graphql-js's own introspection query is deeper than 12.
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
      if (exempt(name)) continue;
      const def = defs[name];
      if (def === undefined) continue;
      depth = Math.max(depth, level);
      const named = namedType(def.type);
      let inner = 0;
      if (named instanceof GraphQLObjectType) inner = walk(named, fieldNodes, level + 1);
      if (!def.args.some((a) => a.name === 'first')) {
        cost += 1 + inner;
        continue;
      }
      const args = argumentsOf(def, fieldNodes[0]!, sc);
      const page = Math.max(1, (args.first ?? args.last ?? GRAPHQL_LIMITS.defaultPage) as number);
      cost += 1 + page * inner + (countsRows(fieldNodes, sc) ? GRAPHQL_LIMITS.totalCountCost : 0);
    }
    return cost;
  };
  // The operation itself is the parent of its root fields (depth 1).
  const complexity = walk(root, [{ kind: 'Field', name: { kind: 'Name', value: '' }, selectionSet: op.selectionSet } as FieldNode], 1);
  return { depth, complexity };
}

/** Whether a connection's selection asks for `totalCount` (after fragments and directives). */
function countsRows(nodes: readonly FieldNode[], sc: SelectionContext): boolean {
  for (const [, fieldNodes] of collectFields(nodes.map((n) => n.selectionSet), sc)) if (fieldNodes[0]!.name.value === 'totalCount') return true;
  return false;
}

/** Root fields the operation runs (by response key, introspection aside): each is a statement or a write of its own. */
export function rootFieldCount(op: OperationDefinitionNode, sc: SelectionContext): number {
  let n = 0;
  for (const [, nodes] of collectFields([op.selectionSet], sc)) if (!exempt(nodes[0]!.name.value)) n++;
  return n;
}

/** Aliases written anywhere in the document's text (every operation and fragment, each counted once); counted once per document text (documents.ts). */
export function aliasCount(document: DocumentNode): number {
  let n = 0;
  visit(document, { [Kind.FIELD]: (node: FieldNode) => { if (node.alias !== undefined) n++; } });
  return n;
}
