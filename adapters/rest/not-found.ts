import { notFound } from '../../runtime/errors/service-error.js';
import type { OperationSpec } from '../../runtime/operations/types.js';

/** A route that exists in the surface but names nothing yet (custom operations before any are defined). */
export const notFoundSpec = (reasonCode: string, message: string): OperationSpec => ({
  id: 'Platform.NotFound',
  authn: 'user',
  scope: 'project',
  grants: () => [],
  execute: async () => {
    throw notFound(reasonCode, message);
  },
});
