import { OPERATION_SURFACES, type HandlerDef } from '../authored/types.js';
import type { ProjectModel } from './model.js';
import { collectionName } from './naming.js';

/**
 * An authored operation as every protocol projects it (CONTRACT "Operations
 * (CoreHandler, EdgeHandler, ManagementHandler)"): REST's route, GraphQL's
 * mutation, gRPC's method, MCP's tool and their exposure bindings all read
 * this one list, so they cannot disagree on which operations exist.
 */
export interface AuthoredOperation {
  handler: HandlerDef;
  /** The operation's name (`approve`): the mutation, the MCP tool's last segment. */
  name: string;
  /** The entity of an instance operation; null for a project operation. */
  entity: string | null;
  /** The entity's collection (`orders`), as REST paths and `Invocation.collection` name it; null for a project operation. */
  collection: string | null;
  /** `Entity.Order.approve` or `Operation.recalculate`. */
  capabilityId: string;
  /** `operation:<name>:invoke` (CONTRACT). */
  requiredGrants: string[];
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
}

/** `approve` → `Approve`: GraphQL's `<Name>Input`/`<Name>Result` and gRPC's method name. */
export const operationTypeName = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

export const operationGrant = (name: string): string => `operation:${name}:invoke`;

/**
 * The operations of a model: handlers of an operation surface that declare
 * an `operation`, sorted by name. An instance operation whose entity the
 * model lacks is left out (the declaration route refuses one; a model that
 * lost the entity since serves nothing for it).
 */
export function authoredOperations(model: ProjectModel): AuthoredOperation[] {
  const out: AuthoredOperation[] = [];
  for (const handler of model.handlers ?? []) {
    const op = handler.operation;
    if (op === undefined || !OPERATION_SURFACES.has(handler.surface)) continue;
    const name = op.name === '' ? handler.name : op.name;
    const entity = op.entity ?? null;
    if (entity !== null && !model.entities.some((e) => e.entityName === entity)) continue;
    out.push({
      handler, name, entity,
      collection: entity === null ? null : collectionName(entity),
      capabilityId: entity === null ? `Operation.${name}` : `Entity.${entity}.${name}`,
      requiredGrants: [operationGrant(name)],
      input: op.input,
      output: op.output ?? null,
    });
  }
  return out.sort((a, b) => (a.capabilityId < b.capabilityId ? -1 : a.capabilityId > b.capabilityId ? 1 : 0));
}
