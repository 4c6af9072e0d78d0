import { collectionName } from './naming.js';
import type { ProjectModel } from './model.js';

/**
 * A relation seen from one entity:
 * - toOne: this entity's reference field (`Order.customer` → Customer);
 * - toMany: another entity's reference field pointing here (`Customer.orders`).
 */
export interface Relation {
  name: string;
  kind: 'toOne' | 'toMany';
  /** Entity on the other side. */
  target: string;
  /** Entity holding the foreign key column. */
  owner: string;
  /** Foreign key field on `owner`. */
  field: string;
  /** Whether the foreign key column is nullable (detach needs it). */
  nullable: boolean;
}

/**
 * Relations of every entity, by entity name then relation name. A toMany
 * relation is named after the owner's collection (`orders`); when one owner
 * references the same target through several fields, the field name is
 * appended (`ordersByBillingCustomer`). A toMany name that collides with one
 * of the target's own fields or toOne relations is dropped (fields win).
 */
export function relationsOf(model: ProjectModel): Map<string, Map<string, Relation>> {
  const out = new Map<string, Map<string, Relation>>();
  for (const e of model.entities) out.set(e.entityName, new Map());
  for (const e of model.entities) {
    for (const f of e.fields) {
      if (f.references === null) continue;
      out.get(e.entityName)!.set(f.name, { name: f.name, kind: 'toOne', target: f.references, owner: e.entityName, field: f.name, nullable: f.nullable });
    }
  }
  for (const e of model.entities) {
    const refs = e.fields.filter((f) => f.references !== null);
    for (const f of refs) {
      const target = model.entities.find((t) => t.entityName === f.references);
      if (target === undefined) continue;
      const sameTarget = refs.filter((r) => r.references === f.references).length;
      const base = collectionName(e.entityName);
      const name = sameTarget > 1 ? `${base}By${f.name.charAt(0).toUpperCase()}${f.name.slice(1)}` : base;
      const taken = out.get(target.entityName)!;
      if (taken.has(name) || target.fields.some((tf) => tf.name === name)) continue;
      taken.set(name, { name, kind: 'toMany', target: e.entityName, owner: e.entityName, field: f.name, nullable: f.nullable });
    }
  }
  return out;
}
