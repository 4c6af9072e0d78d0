import type { AuthoredOperation } from '../publication/authored-operations.js';
import { operationTypeName } from '../publication/authored-operations.js';
import { entityTypeNames, entityTypeNamesOf, SHARED_TYPE_NAMES, type NamedEntity } from './names.js';

/** The GraphQL names of an authored operation (CONTRACT "Operations"): mutation `<name>`, types `<Name>Input` and `<Name>Result`. */
export interface GraphQLOperationNames {
  field: string;
  input: string;
  result: string;
}

export function graphqlOperationNames(name: string): GraphQLOperationNames {
  const n = operationTypeName(name);
  return { field: name, input: `${n}Input`, result: `${n}Result` };
}

/**
 * The authored operations a schema can serve next to the entities it
 * serves (`kept`, names.ts servableEntities): an operation whose mutation
 * field or type names are already taken — an entity's (`createOrder`,
 * `OrderInput`…), a shared type's, or an earlier operation's (the same name on
 * two entities: both would be mutation `<name>`) — is left out, earlier
 * capability ids first. An instance operation needs its entity served.
 */
export function servableGraphQLOperations(ops: readonly AuthoredOperation[], kept: readonly NamedEntity[]): AuthoredOperation[] {
  const types = new Set(SHARED_TYPE_NAMES);
  const fields = new Set<string>();
  for (const e of kept) {
    for (const t of entityTypeNamesOf(e.entityName, e.userFields.filter((f) => f.type === 'Enum').map((f) => f.name))) types.add(t);
    const n = entityTypeNames(e.entityName);
    for (const f of [n.createField, n.updateField, n.deleteField]) fields.add(f);
  }
  const served = new Set(kept.map((e) => e.entityName));
  const out: AuthoredOperation[] = [];
  for (const op of ops) {
    if (op.entity !== null && !served.has(op.entity)) continue;
    const n = graphqlOperationNames(op.name);
    if (fields.has(n.field) || types.has(n.input) || types.has(n.result)) continue;
    fields.add(n.field);
    types.add(n.input);
    types.add(n.result);
    out.push(op);
  }
  return out;
}
