import { ServiceError } from '../runtime/errors/service-error.js';

/** Reason codes the actor runtime itself produces; callers branch on these, never on messages. */
export const ActorReason = {
  InvalidId: 'Actor.InvalidId',
  InvalidOptions: 'Actor.InvalidOptions',
  InvalidDefinition: 'Actor.InvalidDefinition',
  UnknownKind: 'Actor.UnknownKind',
  UnknownMessage: 'Actor.UnknownMessage',
  HandlerFailed: 'Actor.HandlerFailed',
  ActivationFailed: 'Actor.ActivationFailed',
  AskTimeout: 'Actor.AskTimeout',
  SystemStopped: 'Actor.SystemStopped',
} as const;

export const unknownKind = (kind: string): ServiceError =>
  new ServiceError('NOT_FOUND', ActorReason.UnknownKind, `no actor kind ${JSON.stringify(kind)} is registered`);

export const unknownMessage = (kind: string, type: string): ServiceError =>
  new ServiceError('VALIDATION_FAILED', ActorReason.UnknownMessage, `actor kind ${kind} has no message ${JSON.stringify(type)}`);

export const askTimeout = (target: string, type: string, timeoutMs: number): ServiceError =>
  new ServiceError('UNAVAILABLE', ActorReason.AskTimeout, `${target} did not reply to ${type} within ${timeoutMs} ms`, {
    retryable: true,
  });

// Retryable: in cluster mode the caller's retry lands on the node that takes the actor over.
export const systemStopped = (nodeId: string): ServiceError =>
  new ServiceError('UNAVAILABLE', ActorReason.SystemStopped, `actor system on node ${nodeId} is stopped`, { retryable: true });

export const invalidConfig = (reasonCode: string, message: string): ServiceError =>
  new ServiceError('VALIDATION_FAILED', reasonCode, message);
