import type { ValidateFunction } from 'ajv/dist/2020.js';
import { validatorOf } from './operation-schema.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import { ServiceError } from '../errors/service-error.js';
import { declaredOperations, type DeclaredOperation } from './declared-operations.js';

/** An authored operation of a publication, as the operation routes find it. */
export type AuthoredOperation = DeclaredOperation;

interface Index {
  /** By `<collection>/<name>` for instance operations, `/<name>` for project operations. */
  byKey: ReadonlyMap<string, AuthoredOperation>;
  list: readonly AuthoredOperation[];
}

const keyOf = (collection: string | null, name: string): string => `${collection ?? ''}/${name}`;

/** The publication's authored operations, indexed once per publication. */
export function authoredOperations(pub: CompiledPublication): Index {
  return pub.derive('authored.operations', () => {
    const list = declaredOperations(pub.record.model);
    return { byKey: new Map(list.map((o) => [keyOf(o.collection, o.op.name), o])), list };
  });
}

/**
 * THE lookup every protocol's authored-operation dispatch goes through:
 * `collection` is the entity's collection (plural) for an instance operation,
 * null for a project operation (`POST /api/operations/{name}`).
 */
export function findAuthoredOperation(pub: CompiledPublication, collection: string | null, name: string): AuthoredOperation | undefined {
  return authoredOperations(pub).byKey.get(keyOf(collection, name));
}

export interface OperationValidators {
  input: ValidateFunction;
  output: ValidateFunction | null;
}

/**
 * The input and output validators of an authored operation, compiled once per
 * publication (an ajv of its own, dropped with the publication), never per request.
 */
export function validatorsOf(pub: CompiledPublication, found: AuthoredOperation): OperationValidators {
  // Compiled once per schema text for the whole node (operation-schema.ts validatorOf), not per publication:
  // a re-publish with the same schemas compiles nothing, and no ajv instance is made per publication.
  const cache = pub.derive('authored.validators', () => ({ byId: new Map<string, OperationValidators>() }));
  let v = cache.byId.get(found.operationId);
  if (v === undefined) {
    try {
      v = { input: validatorOf(found.op.input), output: found.op.output === undefined ? null : validatorOf(found.op.output) };
    } catch (err) {
      // The declaration route checks the schemas; one that still does not compile is the published artifact's fault, not the caller's.
      throw new ServiceError('BRIDGE_ERROR', 'Handler.SchemaInvalid', `the schemas of operation ${found.op.name} do not compile: ${err instanceof Error ? err.message : String(err)}`);
    }
    cache.byId.set(found.operationId, v);
  }
  return v;
}
