import { ServiceError } from '../runtime/errors/service-error.js';

/**
 * Reason codes of the cluster actor transport. All but PayloadTooLarge are
 * retryable UNAVAILABLE: the caller's retry lands on whichever node owns the
 * actor by then.
 */
export const ClusterReason = {
  /** This node cannot prove it holds the actor's lease; the message did not run. */
  NotOwner: 'Actor.NotOwner',
  /** The lease bucket could not be reached before the deadline (e.g. a JetStream leader election). */
  PlacementUnavailable: 'Actor.PlacementUnavailable',
  /** No reply from the owner within the request timeout; the message may or may not have run. */
  OwnerUnreachable: 'Actor.OwnerUnreachable',
  /** The transport is closed or its NATS connection is gone. */
  TransportClosed: 'Actor.TransportClosed',
  /** The encoded message is larger than the NATS server's max_payload. */
  PayloadTooLarge: 'Actor.PayloadTooLarge',
} as const;

export const notOwner = (actor: string, nodeId: string): ServiceError =>
  new ServiceError('UNAVAILABLE', ClusterReason.NotOwner, `node ${nodeId} does not hold the lease of ${actor}`, { retryable: true });

export const placementUnavailable = (actor: string, cause: unknown): ServiceError =>
  new ServiceError('UNAVAILABLE', ClusterReason.PlacementUnavailable, `placement of ${actor} is unavailable (lease bucket unreachable)`, { retryable: true }, cause);

export const ownerUnreachable = (actor: string, type: string, timeoutMs: number): ServiceError =>
  new ServiceError('UNAVAILABLE', ClusterReason.OwnerUnreachable, `no reply from the owner of ${actor} to ${type} within ${Math.round(timeoutMs)} ms`, {
    retryable: true,
  });

export const transportClosed = (nodeId: string): ServiceError =>
  new ServiceError('UNAVAILABLE', ClusterReason.TransportClosed, `actor transport of node ${nodeId} is closed`, { retryable: true });

export const payloadTooLarge = (what: string): ServiceError =>
  new ServiceError('VALIDATION_FAILED', ClusterReason.PayloadTooLarge, `${what} is larger than the NATS max_payload`);
