import { collectionName } from '../publication/naming.js';
import type { ProjectModel } from '../publication/model.js';
import { OPERATION_SURFACES, type HandlerDef, type OperationDecl } from './types.js';

/** An operation a model's handlers declare (CONTRACT "Operations"), with the names every protocol derives from it. */
export interface DeclaredOperation {
  handler: HandlerDef;
  /** The declaration with its `name` filled in (it defaults to the handler's). */
  op: OperationDecl;
  /** The entity name of an instance operation (`Order`); null for a project operation. */
  entity: string | null;
  /** The entity's collection (`orders`); null for a project operation. */
  collection: string | null;
  /** `Operation.<name>` or `Entity.<Entity>.<name>`: evidence, quotas, bindings and OpenAPI name it so. */
  operationId: string;
  /** `operation:<name>:invoke`. */
  requiredGrant: string;
}

/**
 * The operations of a model's handlers of an operation surface, in handler
 * order. `entity` names the entity (`Order`; its collection `orders` is
 * accepted too); an operation whose entity left the model is left out.
 */
export function declaredOperations(model: Pick<ProjectModel, 'handlers' | 'entities'>): DeclaredOperation[] {
  const out: DeclaredOperation[] = [];
  for (const handler of model.handlers ?? []) {
    if (!OPERATION_SURFACES.has(handler.surface)) continue;
    const decl: OperationDecl = handler.operation ?? { name: handler.name, input: {} };
    const name = decl.name === '' || decl.name === undefined ? handler.name : decl.name;
    let entity: string | null = null;
    if (decl.entity !== undefined) {
      const e = model.entities.find((d) => d.entityName === decl.entity || collectionName(d.entityName) === decl.entity);
      if (e === undefined) continue;
      entity = e.entityName;
    }
    out.push({
      handler, op: { ...decl, name }, entity, collection: entity === null ? null : collectionName(entity),
      operationId: entity === null ? `Operation.${name}` : `Entity.${entity}.${name}`,
      requiredGrant: `operation:${name}:invoke`,
    });
  }
  return out;
}
