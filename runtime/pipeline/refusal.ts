import { httpStatusOf } from '../errors/envelope.js';
import type { ServiceError } from '../errors/service-error.js';
import { ANONYMOUS, noGrants, type Invocation, type OperationContext, type OperationSpec } from '../operations/types.js';
import type { Services } from '../services.js';
import { authenticate } from './authenticate.js';
import { recordEvidence } from './evidence.js';

/** Stands in for the operation of a path no route matches. */
export const UNROUTED: OperationSpec = {
  id: 'Route.Unknown', authn: 'public', scope: 'none', grants: noGrants,
  execute: () => Promise.reject(new Error('an unrouted request is never executed')),
};

/**
 * Records a request a protocol adapter refused before dispatch (no route,
 * body over the limit, undecodable body), so its explainUrl answers like any
 * other: stage 0, the caller as its bearer names it (anonymous when it names
 * no one valid). Runs after the reply is written, off the request path; only
 * stage 1 runs, never the operation.
 */
export function recordRefusal(services: Services, inv: Invocation, error: ServiceError): void {
  const ctx: OperationContext = {
    inv: { ...inv, operation: { ...inv.operation, authn: 'public' } },
    services, actor: ANONYMOUS, scope: null, operationId: inv.operation.id, entity: null, entityOperation: null, rowPolicy: null, envelope: null,
    trace: { stage: 0, evaluatedFilter: null, fieldMasks: [] },
  };
  void authenticate(ctx)
    .then((actor) => {
      ctx.actor = actor;
    }, () => undefined)
    .then(() => recordEvidence(ctx, httpStatusOf(error), error))
    .catch((err: unknown) => services.log.warn('refusal not recorded', { correlationId: inv.correlationId, error: err instanceof Error ? err.message : String(err) }));
}
