import type { ProjectModel } from './model.js';
import { relationsOf } from './relations.js';
import { collectionName } from './naming.js';

export type Verb = 'read' | 'insert' | 'update' | 'delete';

export const ENTITY_OPERATION_KINDS = [
  'Create', 'Read', 'Update', 'Replace', 'Delete', 'List', 'Count', 'BatchCreate', 'BatchUpdate', 'BatchDelete',
  'RelationList', 'RelationAttach', 'RelationDetach',
] as const;
export type EntityOperationKind = (typeof ENTITY_OPERATION_KINDS)[number];

export const VERB_OF: Record<EntityOperationKind, Verb> = {
  Create: 'insert', BatchCreate: 'insert',
  Read: 'read', List: 'read', Count: 'read', RelationList: 'read',
  Update: 'update', Replace: 'update', BatchUpdate: 'update', RelationAttach: 'update', RelationDetach: 'update',
  Delete: 'delete', BatchDelete: 'delete',
};

/** One REST-exposed entity operation of a publication. */
export interface EntityOperation {
  /** `Entity.<Entity>.<Kind>`, plus `.<relation>` for relation kinds (route-tail disambiguator). */
  operationId: string;
  entity: string;
  kind: EntityOperationKind;
  relation: string | null;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path under the base (`/api` or `/v1`), OpenAPI template form: `/orders/{id}`. */
  path: string;
  successStatus: 200 | 201 | 204;
  /** Grants every caller needs; `include` may add read grants per request. */
  requiredGrants: string[];
}

export const grantFor = (entity: string, verb: Verb): string => `entity:${entity}:${verb}`;

/** Every entity operation of a model, in a stable order. */
export function entityOperations(model: ProjectModel): EntityOperation[] {
  const rels = relationsOf(model);
  const ops: EntityOperation[] = [];
  for (const e of model.entities) {
    const c = `/${collectionName(e.entityName)}`;
    const add = (kind: EntityOperationKind, method: EntityOperation['method'], path: string, successStatus: EntityOperation['successStatus'], relation: string | null = null, extraGrants: string[] = []): void => {
      ops.push({
        operationId: `Entity.${e.entityName}.${kind}${relation === null ? '' : `.${relation}`}`,
        entity: e.entityName, kind, relation, method, path, successStatus,
        requiredGrants: [grantFor(e.entityName, VERB_OF[kind]), ...extraGrants],
      });
    };
    add('List', 'GET', c, 200);
    add('Create', 'POST', c, 201);
    add('Count', 'GET', `${c}/count`, 200);
    add('BatchCreate', 'POST', `${c}/batch`, 201);
    add('BatchUpdate', 'PATCH', `${c}/batch`, 200);
    add('BatchDelete', 'POST', `${c}/batch/delete`, 200);
    add('Read', 'GET', `${c}/{id}`, 200);
    add('Update', 'PATCH', `${c}/{id}`, 200);
    add('Replace', 'PUT', `${c}/{id}`, 200);
    add('Delete', 'DELETE', `${c}/{id}`, 204);
    for (const r of rels.get(e.entityName)!.values()) {
      const other = r.kind === 'toOne' ? r.target : r.owner;
      // The side whose row changes needs update; the other side must be readable.
      const changed = r.kind === 'toOne' ? e.entityName : r.owner;
      add('RelationList', 'GET', `${c}/{id}/${r.name}`, 200, r.name, other === e.entityName ? [] : [grantFor(other, 'read')]);
      const linkGrants = [...new Set([grantFor(changed, 'update'), grantFor(e.entityName, 'read'), grantFor(other, 'read')])];
      ops.push({ operationId: `Entity.${e.entityName}.RelationAttach.${r.name}`, entity: e.entityName, kind: 'RelationAttach', relation: r.name, method: 'POST', path: `${c}/{id}/${r.name}`, successStatus: 201, requiredGrants: linkGrants });
      ops.push({ operationId: `Entity.${e.entityName}.RelationDetach.${r.name}`, entity: e.entityName, kind: 'RelationDetach', relation: r.name, method: 'DELETE', path: `${c}/{id}/${r.name}/{relatedId}`, successStatus: 204, requiredGrants: linkGrants });
    }
  }
  return ops;
}
