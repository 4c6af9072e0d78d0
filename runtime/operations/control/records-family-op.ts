import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';

/** What an operation of the versioning, records, surfaces and discovery families declares beyond its tag. */
export type FamilyContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors' | 'stability'>>;

interface Who {
  authn?: OperationSpec['authn'];
  scope: OperationSpec['scope'];
  requestHeaders?: OperationSpec['requestHeaders'];
}

/**
 * The declaration of one operation of these families: platform admin unless
 * it says otherwise, no grants beyond authentication, never metered
 * (control plane), stable, and the error statuses of an admin route with or
 * without a body unless the contract lists its own.
 */
export const familyOp = (tag: TagDecl) => (id: string, who: Who, contract: FamilyContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: who.authn ?? 'admin', scope: who.scope, grants: noGrants, execute,
  ...(who.requestHeaders === undefined ? {} : { requestHeaders: who.requestHeaders }),
  contract: { tag, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});
