import {
  getArgumentValues, getDirectiveValues, GraphQLIncludeDirective, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSkipDirective, Kind,
  type FieldNode, type GraphQLField, type GraphQLNamedType, type GraphQLType, type ValueNode, type FragmentDefinitionNode, type SelectionSetNode,
} from 'graphql';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { SortKey } from '../entities/list-params.js';
import type { PageShape, RowShape } from '../entities/shape.js';
import { validationFailed } from '../errors/service-error.js';

/** What reading a selection needs besides the nodes: the document's fragments and the request's variables. */
export interface SelectionContext {
  fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  variables: Readonly<Record<string, unknown>>;
  /** Arguments coerced during this request, by field node (the limits, the shape and the completion read the same ones). */
  args?: Map<FieldNode, Record<string, unknown>>;
}

/** Coerced arguments of field nodes that reference no variable: they depend on the cached document only. */
const STATIC_ARGS = new WeakMap<FieldNode, Record<string, unknown>>();

/** Whether an AST value mentions a variable anywhere. */
function hasVariable(v: ValueNode): boolean {
  if (v.kind === Kind.VARIABLE) return true;
  if (v.kind === Kind.LIST) return v.values.some(hasVariable);
  if (v.kind === Kind.OBJECT) return v.fields.some((f) => hasVariable(f.value));
  return false;
}

/**
 * graphql-js's getArgumentValues, computed once per field node: for good
 * when the arguments are literals, once per request when they reference
 * variables. Callers read the result, never change it.
 */
export function argumentsOf(def: GraphQLField<unknown, unknown>, node: FieldNode, sc: SelectionContext): Record<string, unknown> {
  const fixed = STATIC_ARGS.get(node);
  if (fixed !== undefined) return fixed;
  const seen = sc.args?.get(node);
  if (seen !== undefined) return seen;
  const args = getArgumentValues(def, node, sc.variables as Record<string, unknown>);
  if (node.arguments === undefined || !node.arguments.some((a) => hasVariable(a.value))) STATIC_ARGS.set(node, args);
  else (sc.args ??= new Map()).set(node, args);
  return args;
}

const MAX_SORT_KEYS = 8;

/**
 * graphql-js's getNamedType with plain instanceof: its own type checks run a
 * development-mode comparison on every miss, which showed in the profile of
 * a list (it unwraps each selected field's type on every request).
 */
export function namedType(t: GraphQLType): GraphQLNamedType {
  let u = t;
  while (u instanceof GraphQLList || u instanceof GraphQLNonNull) u = u.ofType;
  return u as GraphQLNamedType;
}

/**
 * Collected fields of selection sets whose subtree has no directive: they
 * depend on nothing but the (cached, immutable) document, so a repeated
 * document skips the walk. Keyed by the set's node; dropped with its document.
 */
const STATIC_FIELDS = new WeakMap<SelectionSetNode, ReadonlyMap<string, FieldNode[]>>();

/**
 * The fields of selection sets by response key, in document order, with
 * fragments spread and `@skip`/`@include` applied (the GraphQL spec's
 * CollectFields; the schema has no interfaces or unions, so every fragment
 * applies). Nodes with the same key merge, as validation guarantees they
 * may. The result is shared: callers read it, never change it.
 */
export function collectFields(sets: readonly (SelectionSetNode | undefined)[], sc: SelectionContext): ReadonlyMap<string, FieldNode[]> {
  const only = sets.length === 1 ? sets[0] : undefined;
  if (only !== undefined) {
    const hit = STATIC_FIELDS.get(only);
    if (hit !== undefined) return hit;
  }
  const into = new Map<string, FieldNode[]>();
  const directives = collectInto(sets, sc, into, new Set());
  if (only !== undefined && !directives) STATIC_FIELDS.set(only, into);
  return into;
}

/** Collects into `into`; true when a directive was met (the result then depends on the variables). */
function collectInto(sets: readonly (SelectionSetNode | undefined)[], sc: SelectionContext, into: Map<string, FieldNode[]>, seen: Set<string>): boolean {
  let directives = false;
  for (const set of sets) {
    if (set === undefined) continue;
    for (const sel of set.selections) {
      if (sel.directives !== undefined && sel.directives.length > 0) {
        directives = true;
        if (!included(sel, sc)) continue;
      }
      if (sel.kind === Kind.FIELD) {
        const key = sel.alias?.value ?? sel.name.value;
        const list = into.get(key);
        if (list === undefined) into.set(key, [sel]);
        else list.push(sel);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        if (collectInto([sel.selectionSet], sc, into, seen)) directives = true;
      } else {
        const name = sel.name.value;
        const frag = sc.fragments[name];
        if (frag === undefined || seen.has(name)) continue;
        seen.add(name);
        if (frag.directives !== undefined && frag.directives.length > 0) directives = true;
        if (collectInto([frag.selectionSet], sc, into, seen)) directives = true;
      }
    }
  }
  return directives;
}

function included(node: Parameters<typeof getDirectiveValues>[1], sc: SelectionContext): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, sc.variables as Record<string, unknown>)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, sc.variables as Record<string, unknown>)?.if !== false;
}

const subSelections = (nodes: readonly FieldNode[]): Array<SelectionSetNode | undefined> => nodes.map((n) => n.selectionSet);

/**
 * The RowShape of a selection on an entity's object type: columns by
 * response key, a reference field's object as a toOne part, a toMany
 * connection as a page. `__typename` is answered by graphql-js itself.
 */
export function rowShapeOf(entity: CompiledEntity, type: GraphQLObjectType, nodes: readonly FieldNode[], sc: SelectionContext): RowShape {
  const shape: RowShape = { columns: new Map(), toOne: new Map(), toMany: new Map() };
  const defs = type.getFields();
  for (const [key, fieldNodes] of collectFields(subSelections(nodes), sc)) {
    const name = fieldNodes[0]!.name.value;
    const def = defs[name];
    if (def === undefined || name.startsWith('__')) continue;
    const named = namedType(def.type);
    const relation = entity.relations.get(name);
    if (relation !== undefined && named instanceof GraphQLObjectType) {
      if (relation.kind === 'toOne') {
        shape.toOne.set(key, { relation, row: rowShapeOf(entity.peer(relation.target), named, fieldNodes, sc) });
      } else {
        const args = argumentsOf(def, fieldNodes[0]!, sc);
        shape.toMany.set(key, { relation, page: pageShapeOf(entity.peer(relation.owner), named, args, fieldNodes, sc) });
      }
    } else {
      shape.columns.set(key, name);
    }
  }
  return shape;
}

/**
 * The PageShape of a connection field: its arguments (already coerced:
 * enum members are REST values, sort directions `asc`/`desc`) and what of
 * `edges { node cursor }`, `pageInfo` and `totalCount` is selected.
 */
export function pageShapeOf(entity: CompiledEntity, connection: GraphQLObjectType, args: Record<string, unknown>, nodes: readonly FieldNode[], sc: SelectionContext): PageShape {
  const page: PageShape = {
    filter: args.filter ?? null,
    sort: sortOf(entity, args.sort as Array<{ field: string; direction: 'asc' | 'desc' }> | null | undefined),
    first: (args.first as number | null | undefined) ?? null,
    last: (args.last as number | null | undefined) ?? null,
    after: (args.after as string | null | undefined) ?? null,
    before: (args.before as string | null | undefined) ?? null,
    row: null, cursors: false, totalCount: false,
  };
  const parts = collectFields(subSelections(nodes), sc);
  const edgeType = namedType(connection.getFields().edges!.type) as GraphQLObjectType;
  const nodeType = namedType(edgeType.getFields().node!.type) as GraphQLObjectType;
  const rowNodes: FieldNode[] = [];
  for (const [, fieldNodes] of parts) {
    const name = fieldNodes[0]!.name.value;
    if (name === 'totalCount') page.totalCount = true;
    else if (name === 'pageInfo') page.cursors = true;
    else if (name === 'edges') {
      for (const [, edgeNodes] of collectFields(subSelections(fieldNodes), sc)) {
        const part = edgeNodes[0]!.name.value;
        if (part === 'cursor') page.cursors = true;
        else if (part === 'node') rowNodes.push(...edgeNodes);
      }
    }
  }
  if (rowNodes.length > 0) page.row = rowShapeOf(entity, nodeType, rowNodes, sc);
  return page;
}

/** `[{ field, direction }]` → REST sort keys: createdAt when none, duplicates dropped, `id` only as the tie-breaker. */
function sortOf(entity: CompiledEntity, sort: Array<{ field: string; direction: 'asc' | 'desc' }> | null | undefined): SortKey[] {
  if (sort === null || sort === undefined || sort.length === 0) return [{ field: 'createdAt', desc: false }];
  if (sort.length > MAX_SORT_KEYS) throw validationFailed('Query.TooManySortKeys', `at most ${MAX_SORT_KEYS} sort keys`, 'sort');
  const seen = new Set<string>();
  const out: SortKey[] = [];
  for (const k of sort) {
    if (seen.has(k.field) || !entity.queryableFields.has(k.field)) continue;
    seen.add(k.field);
    if (k.field !== 'id') out.push({ field: k.field, desc: k.direction === 'desc' });
  }
  return out;
}
