import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';

export const SCHEMA_TAG: TagDecl = { name: 'Schema', description: 'Entity definitions, the schema journal, migrations and snapshots of a branch (`X-Service-Branch`).' };
export const SCHEMA_TRANSITIONS_TAG: TagDecl = { name: 'SchemaTransitions', description: 'Online expand/backfill/contract changes of one field.' };

type SchemaContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/**
 * `/Schema…` and `/SchemaTransition…` operations: project-scoped, on the branch `X-Service-Branch`
 * names, platform admin only (project roles arrive with governance); never metered.
 */
export const schemaOp = (tag: TagDecl, id: string, contract: SchemaContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/** Reason codes of the `/Schema` bodies' 422s that ajv answers, as the handlers answered them. */
export const SCHEMA_REASONS = {
  prefix: 'Schema',
  fields: { changes: 'Schema.InvalidBody', entities: 'Schema.InvalidBody', entityNames: 'Schema.InvalidBody' },
};

/** Errors of a route without a body that may answer 409 (a concurrent change, a state that refuses it). */
export const STATE_ERRORS = [400, 401, 403, 404, 409, 422];
