import type { MeteringDecl, OperationContract, TagDecl } from '../contract/index.js';
import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';

export const EXPLAINABILITY_TAG: TagDecl = { name: 'Explainability', description: 'Why a request was decided, routed and planned as it was (docs/explainability.md).' };

/** Explaining runs no entity operation and consumes nothing (runtime/usage/meter.ts meters entity, realtime and webhook work only). */
export const EXPLAIN_UNMETERED: MeteringDecl = { unit: 'none', why: 'explains a decision, a route or a plan; runs no metered operation' };

export type ExplainContract = Omit<OperationContract, 'tag' | 'metering' | 'stability'>;

export const explainContract = (c: ExplainContract): OperationContract => ({ tag: EXPLAINABILITY_TAG, metering: EXPLAIN_UNMETERED, stability: 'stable', ...c });

/** Explainability reads of the caller's project: any authenticated caller of the project, no grant. */
export const explainOp = (id: string, contract: ExplainContract, execute: OperationSpec['execute']): DeclaredSpec =>
  ({ id, authn: 'user', scope: 'project', grants: noGrants, execute, contract: explainContract(contract) });
