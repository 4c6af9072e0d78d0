import type { CompiledPublication } from '../../publication/compiled-publication.js';
import type { HandlerDef } from '../../authored/types.js';
import { noGrants, type OperationSpec } from '../types.js';

/**
 * PLACEHOLDER until the `ops` branch merges (its file replaces this one):
 * the one spec every protocol dispatches an authored operation through.
 * Invocation: `params.operation` the name, `params.id` an instance
 * operation's row, `collection` the entity's collection or null, `body` the input.
 */
export const AUTHORED_OPERATION_SPEC: OperationSpec = Object.assign({
  id: 'Authored.Operation', authn: 'user', scope: 'project', grants: noGrants,
  execute: () => Promise.resolve({ status: 501, body: { error: { code: 'INTERNAL', reasonCode: 'Handler.NotImplemented', message: 'authored operations are not wired yet' } } }),
} satisfies OperationSpec, {
  // Tells test/authored/protocols-plumbing.test.ts that stage 2 does not resolve an instance operation's collection yet.
  placeholder: true,
});

/** The handler of an operation by collection (null: a project operation) and name. */
export function findAuthoredOperation(pub: CompiledPublication, collection: string | null, name: string): HandlerDef | undefined {
  return (pub.record.model.handlers ?? []).find((h) => h.operation !== undefined && (h.operation.name || h.name) === name
    && (collection === null ? h.operation.entity === undefined : h.operation.entity !== undefined && pub.entities.get(h.operation.entity)?.collection === collection));
}
