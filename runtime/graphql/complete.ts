import {
  GraphQLEnumType, GraphQLError, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, locatedError,
  type ExecutionResult, type FieldNode, type GraphQLLeafType, type GraphQLOutputType, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import { argumentsOf, collectFields, type SelectionContext } from './selection.js';

/** The part of graphql-js's GraphQLResolveInfo our resolver reads. */
export interface FieldInfo {
  fieldName: string;
  fieldNodes: readonly FieldNode[];
  returnType: GraphQLOutputType;
  parentType: GraphQLObjectType;
  path: Path;
}
interface Path {
  prev: Path | undefined;
  key: string | number;
}
export type Resolve<C> = (source: unknown, args: Record<string, unknown>, context: C, info: FieldInfo) => unknown;

const pathOf = (p: Path | undefined): Array<string | number> => {
  const out: Array<string | number> = [];
  for (let at = p; at !== undefined; at = at.prev) out.unshift(at.key);
  return out;
};

/**
 * Executes a query operation whose root fields read planned results, the
 * way graphql-js's `execute` does (CollectFields, CompleteValue, null
 * propagation to the nearest nullable field, errors with their paths) with
 * the same resolver, minus what such a query never needs: a resolver call
 * per field through the generic machinery, abstract types, async nested
 * fields. Root fields run concurrently. Introspection and mutations go
 * through graphql-js itself (execute.ts decides).
 */
export async function executeQuery<C>(schema: GraphQLSchema, op: OperationDefinitionNode, sc: SelectionContext, context: C, resolve: Resolve<C>): Promise<ExecutionResult> {
  const root = schema.getQueryType()!;
  const errors: GraphQLError[] = [];
  const fields = [...collectFields([op.selectionSet], sc)];
  const defs = root.getFields();
  let nulled = false;
  const values = await Promise.all(fields.map(async ([key, nodes]) => {
    const name = nodes[0]!.name.value;
    if (name === '__typename') return root.name;
    const def = defs[name]!;
    const path: Path = { prev: undefined, key };
    try {
      const args = argumentsOf(def, nodes[0]!, sc);
      const value = await resolve({}, args, context, { fieldName: name, fieldNodes: nodes, returnType: def.type, parentType: root, path });
      return completeValue(def.type, value, nodes, path);
    } catch (err) {
      errors.push(located(err, nodes, path));
      if (def.type instanceof GraphQLNonNull) nulled = true;
      return null;
    }
  }));
  const data: Record<string, unknown> = {};
  fields.forEach(([key], i) => (data[key] = values[i]));
  return errors.length === 0 ? { data } : { data: nulled ? null : data, errors };

  function completeField(parent: GraphQLObjectType, source: unknown, key: string, nodes: readonly FieldNode[], path: Path): unknown {
    const name = nodes[0]!.name.value;
    if (name === '__typename') return parent.name;
    const def = parent.getFields()[name]!;
    try {
      const value = resolve(source, {}, context, { fieldName: name, fieldNodes: nodes, returnType: def.type, parentType: parent, path });
      return completeValue(def.type, value, nodes, path);
    } catch (err) {
      if (def.type instanceof GraphQLNonNull) throw located(err, nodes, path);
      errors.push(located(err, nodes, path));
      return null;
    }
  }

  function completeValue(type: GraphQLOutputType, value: unknown, nodes: readonly FieldNode[], path: Path): unknown {
    if (value instanceof Error) throw value;
    if (type instanceof GraphQLNonNull) {
      const v = completeValue(type.ofType, value, nodes, path);
      if (v === null) throw new GraphQLError(`Cannot return null for non-nullable field ${pathOf(path).join('.')}.`);
      return v;
    }
    if (value === null || value === undefined) return null;
    if (type instanceof GraphQLList) {
      const item = type.ofType;
      return (value as unknown[]).map((v, i) => {
        const at: Path = { prev: path, key: i };
        try {
          return completeValue(item, v, nodes, at);
        } catch (err) {
          if (item instanceof GraphQLNonNull) throw err;
          errors.push(located(err, nodes, at));
          return null;
        }
      });
    }
    // Plain instanceof: graphql-js's isLeafType runs a development-mode check on every miss (every object value).
    if (type instanceof GraphQLScalarType || type instanceof GraphQLEnumType) return (type as GraphQLLeafType).serialize(value);
    const object = type as GraphQLObjectType;
    const out: Record<string, unknown> = {};
    for (const [key, fieldNodes] of collectFields(nodes.map((n) => n.selectionSet), sc)) {
      out[key] = completeField(object, value, key, fieldNodes, { prev: path, key });
    }
    return out;
  }
}

/** An error at a field: once located it keeps its first path (null propagation rethrows it upward). */
function located(err: unknown, nodes: readonly FieldNode[], path: Path): GraphQLError {
  if (err instanceof GraphQLError && err.path !== undefined) return err;
  return locatedError(err, nodes, pathOf(path));
}
