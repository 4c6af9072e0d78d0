/**
 * The control-plane routes of issue 14 in the OpenAPI document, assembled from one module
 * per family: branches and sandboxes, proposals and deployments, schema entities, the
 * schema journal/migrations/snapshots and transitions, versioning, records and surfaces,
 * discovery. openapi-static.ts adds these to the platform's fixed routes.
 * test/openapi/control-plane.test.ts checks every such route of the REST route table is here.
 */
import type { Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { CONTROL_COMMON_SCHEMA_NAMES, controlCommonSchemas } from './openapi-control-common.js';
import { PROPOSAL_OPS, PROPOSAL_SCHEMA_NAMES, PROPOSAL_TAGS, proposalAndDeploymentSchemas, proposalParameters } from './openapi-proposals.js';
import { SCHEMA_ENTITY_OPS, SCHEMA_ENTITY_SCHEMA_NAMES, SCHEMA_TAG, schemaEntityParameters, schemaEntitySchemas } from './openapi-schema-entities.js';
import { SCHEMA_JOURNAL_OPS, SCHEMA_JOURNAL_SCHEMA_NAMES, SCHEMA_TRANSITION_TAG, schemaJournalParameters, schemaJournalSchemas } from './openapi-schema-journal.js';

export const CONTROL_PLANE_SCHEMA_NAMES = [
  ...CONTROL_COMMON_SCHEMA_NAMES, ...PROPOSAL_SCHEMA_NAMES, ...SCHEMA_ENTITY_SCHEMA_NAMES,
  ...SCHEMA_JOURNAL_SCHEMA_NAMES,
] as const;

export const CONTROL_PLANE_OPS: StaticOp[] = [
  ...PROPOSAL_OPS, ...SCHEMA_ENTITY_OPS, ...SCHEMA_JOURNAL_OPS,
];

export function controlPlaneSchemas(): Json {
  return {
    ...controlCommonSchemas(), ...proposalAndDeploymentSchemas(), ...schemaEntitySchemas(),
    ...schemaJournalSchemas(),
  };
}

export function controlPlaneParameters(): Json {
  return { ...proposalParameters(), ...schemaEntityParameters(), ...schemaJournalParameters() };
}

export const CONTROL_PLANE_TAGS = [...PROPOSAL_TAGS, SCHEMA_TAG, SCHEMA_TRANSITION_TAG];
