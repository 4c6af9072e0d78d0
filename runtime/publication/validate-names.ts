import { COMPARISON_OPS } from '../filter/ast.js';
import { collectionName } from './naming.js';
import { entityTypeNamesOf, SHARED_TYPE_NAMES } from '../graphql/names.js';
import type { EntityDef, ProjectModel } from './model.js';

/**
 * Names a definition may not use because something derived from it would
 * collide with another name, or with a word the platform gives meaning to.
 * Every rule here makes some route, filter or field unreachable otherwise:
 * the name is refused at definition time (422), never silently shadowed.
 */

/**
 * First path segments under /api that a collection name must not take
 * (fixed routes win over entity routes in adapters/rest/router.ts). Kept
 * in step with STATIC_ROUTES by test/rest/schema-names.test.ts.
 */
export const RESERVED_COLLECTIONS: ReadonlySet<string> = new Set([
  'audit', 'audits', 'events', 'health', 'identity', 'identities', 'openapi.json', 'openapi.yaml', 'operations', 'projects',
  'realtime', 'realtimes', 'usage', 'webhooks', 'graphql', 'grpc', 'version', 'root-project', 'scheduling', 'schedulings',
  // Not routes yet; reserved for the control plane's next surfaces.
  'tenantRecords', 'projectRecords', 'schemas', 'branches', 'sandboxes', 'proposals', 'deployments', 'usages', 'versions',
]);

/** Entity names that are platform surfaces or types every GraphQL schema has (runtime/graphql/names.ts). */
export const RESERVED_ENTITY_NAMES: ReadonlySet<string> = new Set([
  'TenantRecord', 'ProjectRecord', 'OrganizationRecord', 'Schema', 'Event', 'Webhook', 'RuntimeFabric', 'CredentialReveal',
  ...SHARED_TYPE_NAMES,
]);

/**
 * Field names with a meaning in the filter language. `and`, `or`, `not`
 * combine filters. The comparison operators are reserved too: a reference
 * into this entity nests a filter whose keys are this entity's fields, and
 * a key that is an operator turns it into a comparison of the id instead.
 */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['and', 'or', 'not', ...COMPARISON_OPS]);

export interface NameProblem {
  field: string;
  reasonCode: string;
  message: string;
}

/** `Customer` → its GraphQL root field names: the single row and the list. */
const rootFields = (entityName: string): string[] => [entityName.charAt(0).toLowerCase() + entityName.slice(1), collectionName(entityName)];

/** A toMany relation's name, as relations.ts derives it. */
function toManyName(owner: EntityDef, field: string, sameTarget: number): string {
  const base = collectionName(owner.entityName);
  return sameTarget > 1 ? `${base}By${field.charAt(0).toUpperCase()}${field.slice(1)}` : base;
}

interface RelationClash {
  key: string;
  owner: string;
  field: string;
  target: string;
  name: string;
  /** The target's field the relation name collides with, if any. */
  targetField: string | null;
}

/**
 * toMany relation names that collide on their target, with a field of the
 * target or with another toMany relation (relations.ts keeps the first
 * and drops the other, so a collision is an unreachable relation).
 */
function relationClashes(model: ProjectModel): RelationClash[] {
  const out: RelationClash[] = [];
  const taken = new Map<string, Set<string>>();
  for (const e of model.entities) {
    const refs = e.fields.filter((f) => f.references !== null);
    for (const f of refs) {
      const target = model.entities.find((t) => t.entityName === f.references);
      if (target === undefined) continue;
      const name = toManyName(e, f.name, refs.filter((r) => r.references === f.references).length);
      const names = taken.get(target.entityName) ?? new Set(target.fields.map((tf) => tf.name));
      taken.set(target.entityName, names);
      if (names.has(name)) {
        const targetField = target.fields.some((tf) => tf.name === name) ? name : null;
        out.push({ key: `${e.entityName}.${f.name}`, owner: e.entityName, field: f.name, target: target.entityName, name, targetField });
      } else names.add(name);
    }
  }
  return out;
}

/**
 * Problems with the names of `def` once it joins `model` (replacing an
 * entity of the same name, for an alter): collection and GraphQL root field
 * collisions with other entities, and toMany relations this change would
 * make unreachable. Collisions already in `model` are not reported again.
 */
export function nameProblems(def: EntityDef, model: ProjectModel): NameProblem[] {
  const problems: NameProblem[] = [];
  const others = model.entities.filter((e) => e.entityName !== def.entityName);
  const mine = rootFields(def.entityName);
  // An alter keeps the entity's name: its name collisions, if any, predate this change.
  const isNew = others.length === model.entities.length;
  for (const o of isNew ? others : []) {
    if (collectionName(o.entityName) === mine[1]) {
      problems.push({ field: 'entityName', reasonCode: 'Schema.NameCollision', message: `'${def.entityName}' and '${o.entityName}' both have the collection name '${mine[1]}'` });
      continue;
    }
    const clash = rootFields(o.entityName).find((n) => mine.includes(n));
    if (clash !== undefined) {
      problems.push({ field: 'entityName', reasonCode: 'Schema.NameCollision', message: `'${def.entityName}' and '${o.entityName}' both derive the name '${clash}'` });
    }
  }
  problems.push(...graphqlTypeClashes(def, others));
  const before = new Set(relationClashes(model).map((c) => c.key));
  // In the model's own order (by name), as relations.ts walks it: the same relation loses a clash.
  const after = { entities: [...others, def].sort((a, b) => (a.entityName < b.entityName ? -1 : a.entityName > b.entityName ? 1 : 0)) };
  for (const c of relationClashes(after)) {
    if (before.has(c.key)) continue;
    const what = c.targetField !== null ? `${c.target}'s field '${c.targetField}'` : `another relation of ${c.target}`;
    const message = `the relation '${c.name}' from ${c.owner}.${c.field} to ${c.target} collides with ${what}`;
    if (c.owner === def.entityName) {
      problems.push({ field: `fields[${def.fields.findIndex((f) => f.name === c.field)}].references`, reasonCode: 'Schema.NameCollision', message });
    } else if (c.target === def.entityName && c.targetField !== null) {
      problems.push({ field: `fields[${def.fields.findIndex((f) => f.name === c.targetField)}].name`, reasonCode: 'Schema.NameCollision', message });
    } else {
      problems.push({ field: 'entityName', reasonCode: 'Schema.NameCollision', message });
    }
  }
  return problems;
}

const graphqlTypesOf = (e: EntityDef): string[] => entityTypeNamesOf(e.entityName, e.fields.filter((f) => f.type === 'Enum').map((f) => f.name));

/**
 * GraphQL type names `def` would derive (`OrderEdge`, `OrderStatus`, …) that
 * another entity's name or derived names already take, or that its own
 * enum fields derive twice: the GraphQL schema would have to leave an
 * entity out (runtime/graphql/schema.ts), so the definition is refused.
 */
function graphqlTypeClashes(def: EntityDef, others: readonly EntityDef[]): NameProblem[] {
  const mine = graphqlTypesOf(def);
  const theirs = new Map<string, string>();
  for (const o of others) for (const n of graphqlTypesOf(o)) theirs.set(n, o.entityName);
  const problems: NameProblem[] = [];
  const seen = new Set<string>();
  for (const n of mine) {
    const owner = theirs.get(n) ?? (seen.has(n) ? def.entityName : undefined);
    seen.add(n);
    if (owner === undefined) continue;
    problems.push({ field: 'entityName', reasonCode: 'Schema.NameCollision', message: `'${def.entityName}' derives the GraphQL type '${n}', which ${owner === def.entityName ? 'it derives twice' : `'${owner}' takes`}` });
    break;
  }
  return problems;
}
