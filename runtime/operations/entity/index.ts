import type { EntityOperationKind } from '../../publication/operations.js';
import type { OperationSpec } from '../types.js';
import { batchCreateOp, batchDeleteOp, batchUpdateOp } from './batch.js';
import { createOp, deleteOp, readOp, replaceOp, updateOp } from './crud.js';
import { countOp, listOp } from './list.js';
import { relationAttachOp, relationDetachOp, relationListOp } from './relations.js';

/** Every entity operation kind's spec; the REST router maps routes onto these. */
export const ENTITY_SPECS: Record<EntityOperationKind, OperationSpec> = {
  Create: createOp,
  Read: readOp,
  Update: updateOp,
  Replace: replaceOp,
  Delete: deleteOp,
  List: listOp,
  Count: countOp,
  BatchCreate: batchCreateOp,
  BatchUpdate: batchUpdateOp,
  BatchDelete: batchDeleteOp,
  RelationList: relationListOp,
  RelationAttach: relationAttachOp,
  RelationDetach: relationDetachOp,
};
export { combinedCreates } from './create-combiner.js';
export { checkIdempotencyKey, runClaimedIdempotent, runIdempotent } from './idempotency.js';
