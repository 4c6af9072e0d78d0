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
import { VERSIONING_OPS, VERSIONING_SCHEMA_NAMES, VERSIONING_TAG, versioningParameters, versioningSchemas } from './openapi-versioning.js';
import { RECORD_OPS, RECORD_SCHEMA_NAMES, RECORD_TAGS, recordParameters, recordSchemas } from './openapi-records.js';
import { DISCOVERY_OPS, DISCOVERY_SCHEMA_NAMES, DISCOVERY_TAG, discoverySchemas } from './openapi-discovery.js';

export const CONTROL_PLANE_SCHEMA_NAMES = [
  ...CONTROL_COMMON_SCHEMA_NAMES,
  ...VERSIONING_SCHEMA_NAMES, ...RECORD_SCHEMA_NAMES, ...DISCOVERY_SCHEMA_NAMES,
] as const;

export const CONTROL_PLANE_OPS: StaticOp[] = [
  ...VERSIONING_OPS, ...RECORD_OPS, ...DISCOVERY_OPS,
];

export function controlPlaneSchemas(): Json {
  return {
    ...controlCommonSchemas(),
    ...versioningSchemas(), ...recordSchemas(), ...discoverySchemas(),
  };
}

export function controlPlaneParameters(): Json {
  return { ...versioningParameters(), ...recordParameters() };
}

export const CONTROL_PLANE_TAGS = [VERSIONING_TAG, ...RECORD_TAGS, DISCOVERY_TAG];
