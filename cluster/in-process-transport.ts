import { ServiceError } from '../runtime/errors/service-error.js';
import { clonePlainData, NonPlainDataError } from './plain-data.js';
import type { ActorEnvelope, ActorTransport } from '../actors/index.js';
import { fromWireError, toWireError } from './wire-error.js';

type LocalSystem = { deliverLocal(msg: ActorEnvelope): Promise<unknown> };

export interface InProcessTransportOptions {
  /**
   * Deep-copy payloads and replies and reject non-JSON data, as encoding on
   * the wire would. Default true; turn off only where a benchmark shows the
   * copy matters and every actor is known to return fresh plain data.
   */
  copyData?: boolean;
}

/**
 * Single-node transport: every actor lives here. It still copies data and
 * sends errors through their wire form so that actor code behaves the same
 * here as over NATS.
 */
export class InProcessTransport implements ActorTransport {
  private system: LocalSystem | null = null;
  private closed = false;
  private readonly copyData: boolean;

  constructor(opts: InProcessTransportOptions = {}) {
    this.copyData = opts.copyData ?? true;
  }

  bind(system: LocalSystem): void {
    if (this.system !== null) {
      throw new ServiceError('VALIDATION_FAILED', 'Actor.TransportBound', 'transport is already bound to an actor system');
    }
    this.system = system;
  }

  // The deadline is the caller's (ActorSystem.ask); nothing here waits on its own.
  request(msg: ActorEnvelope, _timeoutMs: number): Promise<unknown> {
    const system = this.system;
    if (system === null || this.closed) {
      return Promise.reject(
        new ServiceError('UNAVAILABLE', 'Actor.TransportClosed', 'actor transport is not bound or is closed', { retryable: true }),
      );
    }
    let local = msg;
    if (this.copyData) {
      try {
        local = { target: msg.target, type: msg.type, payload: clonePlainData(msg.payload), correlationId: msg.correlationId };
      } catch (err) {
        return Promise.reject(nonPlain(err, 'VALIDATION_FAILED', 'Actor.NonPlainPayload', `payload of ${msg.type}`));
      }
    }
    return system.deliverLocal(local).then(this.copyData ? copyReply : undefined, throwViaWire);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

function copyReply(value: unknown): unknown {
  try {
    return clonePlainData(value);
  } catch (err) {
    // The handler already ran; returning non-plain data is the actor's bug, not the caller's.
    throw nonPlain(err, 'INTERNAL', 'Actor.NonPlainReply', 'reply');
  }
}

function throwViaWire(err: unknown): never {
  throw fromWireError(toWireError(err));
}

function nonPlain(err: unknown, code: 'VALIDATION_FAILED' | 'INTERNAL', reasonCode: string, what: string): unknown {
  if (!(err instanceof NonPlainDataError)) return err;
  return new ServiceError(code, reasonCode, `${what} is not plain data at ${err.path || '(root)'}: ${err.what}`);
}
