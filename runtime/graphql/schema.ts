import {
  GraphQLBoolean, GraphQLEnumType, GraphQLID, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType,
  GraphQLSchema, GraphQLString, type GraphQLEnumValueConfigMap, type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap, type GraphQLInputType, type GraphQLOutputType, type GraphQLScalarType,
} from 'graphql';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { FieldDef, FieldType } from '../publication/model.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import { entityTypeNames, enumFilterName, enumTypeName, enumValueName, servableEntities, sortFieldValue, type EntityTypeNames } from './names.js';
import type { AuthoredOperation } from '../publication/authored-operations.js';
import { servableGraphQLOperations } from './operation-names.js';
import { operationField } from './operation-types.js';
import { DateTimeScalar, DecimalScalar, InstantScalar, JSONScalar } from './scalars.js';

/**
 * The GraphQL schema of one publication (CONTRACT: GraphQL), built once per
 * compiled publication (`graphqlSchemaOf`) and used for validation,
 * introspection and the SDL. It carries no resolvers: root fields are
 * planned to SQL and dispatched as the REST operations they mirror.
 */
export interface PublicationGraphQL {
  schema: GraphQLSchema;
  /** Mutation field → the authored operation it runs (operation-names.ts servableGraphQLOperations). */
  operations: ReadonlyMap<string, AuthoredOperation>;
  /** The `<Name>Result` object types: their fields read the operation's return value by name. */
  operationResults: ReadonlySet<string>;
  /** Entities left out because a derived type name collided (models that predate the definition-time check). */
  skipped: string[];
}

const nonNull = <T extends GraphQLOutputType | GraphQLInputType>(t: T, required: boolean): T => (required ? (new GraphQLNonNull(t) as unknown as T) : t);
const listOf = <T extends GraphQLInputType>(t: T): GraphQLList<GraphQLNonNull<T>> => new GraphQLList(new GraphQLNonNull(t));

const SCALARS: Record<Exclude<FieldType, 'Enum'>, GraphQLScalarType> = {
  ID: GraphQLID, String: GraphQLString, Int: GraphQLInt, Decimal: DecimalScalar, DateTime: DateTimeScalar, Instant: InstantScalar, Boolean: GraphQLBoolean, JSON: JSONScalar,
};

/** Comparison operators per field type, as the REST filter parser allows them (runtime/filter/parse.ts). */
const ORDERED_OPS = ['eq', 'ne', 'gt', 'lt', 'in', 'between', 'isNull'] as const;
const OPS_OF: Record<FieldType, readonly string[]> = {
  ID: [...ORDERED_OPS, 'like'], String: [...ORDERED_OPS, 'like'], Enum: [...ORDERED_OPS, 'like'],
  Int: ORDERED_OPS, Decimal: ORDERED_OPS, DateTime: ORDERED_OPS, Instant: ORDERED_OPS,
  Boolean: ['eq', 'ne', 'in', 'isNull'], JSON: ['isNull'],
};

/** `{ eq ne gt lt in between like isNull }` over one value type. */
function comparisonInput(name: string, value: GraphQLInputType & (GraphQLScalarType | GraphQLEnumType), ops: readonly string[]): GraphQLInputObjectType {
  const fields: GraphQLInputFieldConfigMap = {};
  for (const op of ops) {
    if (op === 'in' || op === 'between') fields[op] = { type: listOf(value), description: op === 'between' ? '[low, high], both inclusive' : undefined };
    else if (op === 'isNull') fields[op] = { type: GraphQLBoolean };
    else if (op === 'like') fields[op] = { type: GraphQLString, description: 'SQL LIKE pattern: % and _ are wildcards, \\ escapes' };
    else fields[op] = { type: value };
  }
  return new GraphQLInputObjectType({ name, fields });
}

class SchemaBuilder {
  private readonly objects = new Map<string, GraphQLObjectType>();
  private readonly filters = new Map<string, GraphQLInputObjectType>();
  private readonly connections = new Map<string, GraphQLObjectType>();
  private readonly sorts = new Map<string, GraphQLInputObjectType>();
  private readonly enums = new Map<string, GraphQLEnumType>();
  private readonly enumFilters = new Map<string, GraphQLInputObjectType>();
  private readonly scalarFilters = new Map<FieldType, GraphQLInputObjectType>();
  readonly pageInfo = new GraphQLObjectType({
    name: 'PageInfo',
    fields: {
      hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      startCursor: { type: GraphQLString },
      endCursor: { type: GraphQLString },
    },
  });
  readonly sortDirection = new GraphQLEnumType({ name: 'SortDirection', values: { ASC: { value: 'asc' }, DESC: { value: 'desc' } } });
  readonly changeKind = new GraphQLEnumType({ name: 'ChangeKind', values: { CREATED: { value: 'created' }, UPDATED: { value: 'updated' }, DELETED: { value: 'deleted' } } });
  readonly deleteResult = new GraphQLObjectType({
    name: 'DeleteResult',
    fields: { id: { type: new GraphQLNonNull(GraphQLID) }, deleted: { type: new GraphQLNonNull(GraphQLBoolean) } },
  });

  constructor(private readonly entities: ReadonlyMap<string, CompiledEntity>) {}

  names(e: CompiledEntity): EntityTypeNames {
    return entityTypeNames(e.entityName);
  }

  enumOf(e: CompiledEntity, f: FieldDef): GraphQLEnumType {
    const name = enumTypeName(e.entityName, f.name);
    let t = this.enums.get(name);
    if (t === undefined) {
      const values: GraphQLEnumValueConfigMap = {};
      // Two REST values that upper-case alike (`Paid`, `paid`): the first keeps the GraphQL name.
      for (const v of f.values) values[enumValueName(v)] ??= { value: v };
      t = new GraphQLEnumType({ name, values });
      this.enums.set(name, t);
    }
    return t;
  }

  /** The GraphQL type of a stored value (a reference field's own value is its ID). */
  valueType(e: CompiledEntity, f: FieldDef): GraphQLScalarType | GraphQLEnumType {
    return f.type === 'Enum' ? this.enumOf(e, f) : SCALARS[f.type];
  }

  comparisonFilter(e: CompiledEntity, f: FieldDef): GraphQLInputObjectType {
    if (f.type === 'Enum') {
      const name = enumFilterName(e.entityName, f.name);
      let t = this.enumFilters.get(name);
      if (t === undefined) this.enumFilters.set(name, (t = comparisonInput(name, this.enumOf(e, f), OPS_OF.Enum)));
      return t;
    }
    let t = this.scalarFilters.get(f.type);
    if (t === undefined) this.scalarFilters.set(f.type, (t = comparisonInput(`${f.type}Filter`, SCALARS[f.type], OPS_OF[f.type])));
    return t;
  }

  filterOf(e: CompiledEntity): GraphQLInputObjectType {
    const n = this.names(e);
    let t = this.filters.get(n.filter);
    if (t !== undefined) return t;
    t = new GraphQLInputObjectType({
      name: n.filter,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const f of e.queryableFields.values()) {
          // A reference field takes the related entity's filter (`customer: { email: { eq } }`); `id` compares itself.
          const target = f.name !== 'id' && f.references !== null ? this.entities.get(f.references) : undefined;
          fields[f.name] = { type: target !== undefined ? this.filterOf(target) : this.comparisonFilter(e, f) };
        }
        const self = this.filterOf(e);
        fields.and = { type: listOf(self) };
        fields.or = { type: listOf(self) };
        fields.not = { type: self };
        return fields;
      },
    });
    this.filters.set(n.filter, t);
    return t;
  }

  sortOf(e: CompiledEntity): GraphQLInputObjectType {
    const n = this.names(e);
    let t = this.sorts.get(n.sort);
    if (t !== undefined) return t;
    const values: GraphQLEnumValueConfigMap = {};
    for (const f of e.queryableFields.values()) if (f.type !== 'JSON') values[sortFieldValue(f.name)] = { value: f.name };
    const field = new GraphQLEnumType({ name: n.sortField, values });
    t = new GraphQLInputObjectType({
      name: n.sort,
      fields: { field: { type: new GraphQLNonNull(field) }, direction: { type: this.sortDirection, defaultValue: 'asc' } },
    });
    this.sorts.set(n.sort, t);
    return t;
  }

  /** `(filter, first, after, last, before, sort)`: the arguments of every connection field. */
  connectionArgs(e: CompiledEntity): GraphQLFieldConfigArgumentMap {
    return {
      filter: { type: this.filterOf(e) },
      first: { type: GraphQLInt, description: '0–200, default 50' },
      after: { type: GraphQLString },
      last: { type: GraphQLInt, description: '0–200; pages backwards from `before` (or the end)' },
      before: { type: GraphQLString },
      sort: { type: listOf(this.sortOf(e)), description: 'id breaks ties, as in REST' },
    };
  }

  connectionOf(e: CompiledEntity): GraphQLObjectType {
    const n = this.names(e);
    let t = this.connections.get(n.connection);
    if (t !== undefined) return t;
    const edge = new GraphQLObjectType({
      name: n.edge,
      fields: () => ({ node: { type: new GraphQLNonNull(this.objectOf(e)) }, cursor: { type: new GraphQLNonNull(GraphQLString) } }),
    });
    t = new GraphQLObjectType({
      name: n.connection,
      fields: () => ({
        edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))) },
        pageInfo: { type: new GraphQLNonNull(this.pageInfo) },
        totalCount: { type: new GraphQLNonNull(GraphQLInt) },
      }),
    });
    this.connections.set(n.connection, t);
    return t;
  }

  objectOf(e: CompiledEntity): GraphQLObjectType {
    let t = this.objects.get(e.entityName);
    if (t !== undefined) return t;
    t = new GraphQLObjectType({
      name: e.entityName,
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = { id: { type: new GraphQLNonNull(GraphQLID) } };
        for (const f of e.userFields) {
          const target = f.references !== null ? this.entities.get(f.references) : undefined;
          // A reference resolves to the related object (`order.customer { email }`).
          fields[f.name] = { type: nonNull<GraphQLOutputType>(target !== undefined ? this.objectOf(target) : this.valueType(e, f), !f.nullable) };
        }
        fields.createdAt = { type: new GraphQLNonNull(DateTimeScalar) };
        fields.updatedAt = { type: new GraphQLNonNull(DateTimeScalar) };
        fields.concurrencyToken = { type: new GraphQLNonNull(GraphQLString) };
        for (const r of e.relations.values()) {
          if (r.kind !== 'toMany') continue;
          const target = this.entities.get(r.target);
          if (target !== undefined) fields[r.name] = { type: new GraphQLNonNull(this.connectionOf(target)), args: this.connectionArgs(target) };
        }
        return fields;
      },
    });
    this.objects.set(e.entityName, t);
    return t;
  }

  /** Create: required = non-nullable without a default, as REST's create; a reference takes the related id. */
  inputOf(e: CompiledEntity, mode: 'create' | 'update'): GraphQLInputObjectType {
    const n = this.names(e);
    return new GraphQLInputObjectType({
      name: mode === 'create' ? n.createInput : n.updateInput,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const f of e.userFields) {
          const required = mode === 'create' && !f.nullable && f.default === null;
          fields[f.name] = { type: nonNull<GraphQLInputType>(this.valueType(e, f), required) };
        }
        return fields;
      },
    });
  }

  changeOf(e: CompiledEntity): GraphQLObjectType {
    return new GraphQLObjectType({
      name: this.names(e).change,
      description: 'Names only, never values (spec: change events).',
      fields: {
        kind: { type: new GraphQLNonNull(this.changeKind) },
        entityId: { type: new GraphQLNonNull(GraphQLID) },
        changedFields: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))) },
      },
    });
  }
}

export function buildPublicationSchema(pub: CompiledPublication): PublicationGraphQL {
  const { kept, skipped } = servableEntities(pub.entities.values());
  const b = new SchemaBuilder(new Map(kept.map((e) => [e.entityName, e])));
  const query: GraphQLFieldConfigMap<unknown, unknown> = {};
  const mutation: GraphQLFieldConfigMap<unknown, unknown> = {};
  const subscription: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const e of kept) {
    const n = b.names(e);
    const object = b.objectOf(e);
    query[n.listField] = { type: new GraphQLNonNull(b.connectionOf(e)), args: b.connectionArgs(e) };
    query[n.oneField] = { type: object, args: { id: { type: new GraphQLNonNull(GraphQLID) } }, description: 'null when missing or not visible' };
    mutation[n.createField] = { type: new GraphQLNonNull(object), args: { input: { type: new GraphQLNonNull(b.inputOf(e, 'create')) } } };
    mutation[n.updateField] = {
      type: new GraphQLNonNull(object), description: 'PATCH semantics: only the fields given change',
      args: { id: { type: new GraphQLNonNull(GraphQLID) }, input: { type: new GraphQLNonNull(b.inputOf(e, 'update')) }, ifMatch: { type: GraphQLString } },
    };
    mutation[n.deleteField] = { type: new GraphQLNonNull(b.deleteResult), args: { id: { type: new GraphQLNonNull(GraphQLID) } } };
    subscription[n.changedField] = { type: new GraphQLNonNull(b.changeOf(e)), args: { filter: { type: b.filterOf(e) } } };
  }
  const operations = new Map<string, AuthoredOperation>();
  const operationResults = new Set<string>();
  for (const op of servableGraphQLOperations(pub.authoredOperations, kept)) {
    const { field, resultType } = operationField(op);
    mutation[op.name] = field;
    operations.set(op.name, op);
    if (resultType !== null) operationResults.add(resultType);
  }
  // GraphQL needs a Query type with a field; a project without entities gets this placeholder.
  if (kept.length === 0) query._empty = { type: GraphQLBoolean, description: 'Present only while the project defines no entity; always null.' };
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    ...(Object.keys(mutation).length === 0 ? {} : { mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }) }),
    ...(kept.length === 0 ? {} : { subscription: new GraphQLObjectType({ name: 'Subscription', fields: subscription }) }),
  });
  return { schema, skipped, operations, operationResults };
}

/** The publication's schema, built on first use and kept with the (immutable) publication. */
export function graphqlSchemaOf(pub: CompiledPublication): PublicationGraphQL {
  return pub.derive('graphql-schema', () => buildPublicationSchema(pub));
}
