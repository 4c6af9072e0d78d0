/**
 * Legacy door to the control-plane schema pieces, now in
 * runtime/operations/control/control-schemas.ts: the hand-written OpenAPI
 * modules not yet converted to operation contracts import them from here.
 */
import type { Json } from './openapi-components.js';
import { CONTROL_COMMON_SCHEMAS } from '../operations/control/control-schemas.js';

export {
  controlEnvelope, controlSingle, controlList, str, int, version, pathParam, queryParam, BRANCH_NAME_PATTERN, branchName, at,
} from '../operations/control/control-schemas.js';
export { READ_ERRORS, WRITE_ERRORS } from '../operations/contract/index.js';

export const CONTROL_COMMON_SCHEMA_NAMES = Object.keys(CONTROL_COMMON_SCHEMAS);

export function controlCommonSchemas(): Json {
  return Object.fromEntries(Object.values(CONTROL_COMMON_SCHEMAS).map((s) => [s.name, s.schema]));
}
