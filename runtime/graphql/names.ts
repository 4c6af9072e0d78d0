import { collectionName } from '../publication/naming.js';
import type { EntityOperationKind } from '../publication/operations.js';

/**
 * The GraphQL names derived from an entity (CONTRACT: GraphQL). One place,
 * so the schema, the executor and the definition-time collision check
 * (publication/validate-names.ts) agree on every name.
 */
export interface EntityTypeNames {
  object: string;
  connection: string;
  edge: string;
  filter: string;
  sort: string;
  sortField: string;
  createInput: string;
  updateInput: string;
  change: string;
  /** Root query field of the list: the REST collection (`orders`). */
  listField: string;
  /**
   * Root query field of one row (`order`); `<name>ById` when the entity's
   * name has no plural (`News` → list `news`, one `newsById`).
   */
  oneField: string;
  createField: string;
  updateField: string;
  deleteField: string;
  /** Subscription field (`orderChanged`). */
  changedField: string;
}

/**
 * The root fields of an entity and the entity operation each dispatches (its
 * REST twin). The executor registers its roots, the exposure bindings and the
 * capability matrix read this one table, so they cannot disagree.
 */
export const GRAPHQL_ROOT_KINDS = { list: 'List', one: 'Read', create: 'Create', update: 'Update', delete: 'Delete' } as const satisfies Record<string, EntityOperationKind>;
export type GraphQLRootKind = keyof typeof GRAPHQL_ROOT_KINDS;
/** Where each root kind's field name is in EntityTypeNames. */
export const GRAPHQL_ROOT_FIELDS: Record<GraphQLRootKind, 'listField' | 'oneField' | 'createField' | 'updateField' | 'deleteField'> = {
  list: 'listField', one: 'oneField', create: 'createField', update: 'updateField', delete: 'deleteField',
};

const upperFirst = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

export function entityTypeNames(entityName: string): EntityTypeNames {
  const listField = collectionName(entityName);
  const single = lowerFirst(entityName);
  return {
    object: entityName,
    connection: `${entityName}Connection`,
    edge: `${entityName}Edge`,
    filter: `${entityName}Filter`,
    sort: `${entityName}Sort`,
    sortField: `${entityName}SortField`,
    createInput: `${entityName}CreateInput`,
    updateInput: `${entityName}UpdateInput`,
    change: `${entityName}Change`,
    listField,
    oneField: single === listField ? `${single}ById` : single,
    createField: `create${entityName}`,
    updateField: `update${entityName}`,
    deleteField: `delete${entityName}`,
    changedField: `${single}Changed`,
  };
}

/** `enum <Entity><Field>` of an Enum field (`OrderStatus`), and its filter input. */
export const enumTypeName = (entityName: string, field: string): string => `${entityName}${upperFirst(field)}`;
export const enumFilterName = (entityName: string, field: string): string => `${enumTypeName(entityName, field)}Filter`;

/** An enum member as GraphQL shows it: the REST value upper-cased (`paid` ↔ `PAID`). */
export const enumValueName = (restValue: string): string => restValue.toUpperCase();

/** A sortable field as a `<Entity>SortField` member: `createdAt` → `CREATED_AT`. */
export const sortFieldValue = (field: string): string => field.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Every type name an entity adds to a schema, for collision checks. */
export function entityTypeNamesOf(entityName: string, enumFields: readonly string[]): string[] {
  const n = entityTypeNames(entityName);
  return [n.object, n.connection, n.edge, n.filter, n.sort, n.sortField, n.createInput, n.updateInput, n.change,
    ...enumFields.flatMap((f) => [enumTypeName(entityName, f), enumFilterName(entityName, f)])];
}

/** Types every project's schema has, whatever its entities: entity names may not take them. */
export const SHARED_TYPE_NAMES: readonly string[] = [
  'Query', 'Mutation', 'Subscription', 'PageInfo', 'DeleteResult', 'SortDirection', 'ChangeKind',
  'String', 'Int', 'Float', 'Boolean', 'ID', 'JSON', 'Decimal', 'DateTime', 'Instant',
  'StringFilter', 'IntFilter', 'DecimalFilter', 'DateTimeFilter', 'InstantFilter', 'BooleanFilter', 'IDFilter', 'JSONFilter',
];

/** What the collision check needs of an entity definition. */
export interface NamedEntity {
  entityName: string;
  userFields: ReadonlyArray<{ name: string; type: string }>;
}

/**
 * Entities a schema can serve: one whose derived type names collide with a
 * shared type or an earlier entity's is left out (models that predate the
 * definition-time check). The schema and the exposure bindings both use it.
 */
export function servableEntities<E extends NamedEntity>(entities: Iterable<E>): { kept: E[]; skipped: string[] } {
  const taken = new Set(SHARED_TYPE_NAMES);
  const kept: E[] = [];
  const skipped: string[] = [];
  for (const e of entities) {
    const names = entityTypeNamesOf(e.entityName, e.userFields.filter((f) => f.type === 'Enum').map((f) => f.name));
    if (names.some((n) => taken.has(n)) || new Set(names).size !== names.length) {
      skipped.push(e.entityName);
      continue;
    }
    for (const n of names) taken.add(n);
    kept.push(e);
  }
  return { kept, skipped };
}
