import { notFound } from '../../errors/service-error.js';
import { defineSchemas, type TagDecl } from '../contract/index.js';
import type { DeclaredSpec } from '../types.js';

export const CUSTOM_OPERATIONS_TAG: TagDecl = { name: 'Operations', description: 'Custom operations of the project (spec "Operations"; not defined yet, issue 24).' };

const SCHEMAS = defineSchemas({
  CustomOperationResult: { description: 'The operation\'s typed result (operation-specific JSON).' },
});

/**
 * `POST /api/operations/{operation}`: the route exists in the surface, but no
 * custom operation can be defined yet (issue 24), so every name answers 404
 * `Operation.Unknown`. Declared as it is: experimental, and what it will answer
 * left open.
 */
export const CUSTOM_OPERATION_SPEC: DeclaredSpec = {
  id: 'Platform.NotFound', authn: 'user', scope: 'project', grants: () => [],
  contract: {
    tag: CUSTOM_OPERATIONS_TAG,
    summary: 'Run a custom operation of the project (none can be defined yet: every name answers 404 `Operation.Unknown`)',
    routes: [{ method: 'POST', path: 'operations/:operation' }],
    params: { operation: { description: 'The custom operation\'s name.' } },
    output: { status: 200, body: SCHEMAS.CustomOperationResult },
    errors: [400, 401, 404],
    metering: { unit: 'none', why: 'answers 404 until custom operations exist (issue 24)' },
    stability: 'experimental',
  },
  execute: async () => {
    throw notFound('Operation.Unknown', 'no custom operation with this name');
  },
};
