import { NoRespondersError, RequestError, TimeoutError, type Msg } from '@nats-io/transport-node';
import { ServiceError } from '../runtime/errors/service-error.js';
import { encodeEnvelope, encodeReply } from './codec.js';
import { clonePlainData, NonPlainDataError } from './plain-data.js';
import type { ActorEnvelope } from '../actors/index.js';

/** Encoding and NATS-error helpers of the actor transport's request/reply wire. */
export function encodeRequest(msg: ActorEnvelope): Uint8Array {
  let payload: unknown;
  try {
    payload = clonePlainData(msg.payload);
  } catch (err) {
    throw nonPlain(err, 'VALIDATION_FAILED', 'Actor.NonPlainPayload', `payload of ${msg.type}`);
  }
  return encodeEnvelope({ target: msg.target, type: msg.type, payload, correlationId: msg.correlationId });
}

export function encodeReplyValue(value: unknown): Uint8Array {
  let plain: unknown;
  try {
    plain = clonePlainData(value);
  } catch (err) {
    // The handler already ran; returning non-plain data is the actor's bug, not the caller's.
    throw nonPlain(err, 'INTERNAL', 'Actor.NonPlainReply', 'reply');
  }
  return encodeReply({ ok: true, value: plain });
}

/** False when the reply could not be sent because of its size; other failures (connection gone) are dropped. */
export function respond(m: Msg, bytes: Uint8Array): boolean {
  try {
    m.respond(bytes);
    return true;
  } catch (err) {
    return !(err instanceof Error && /max_payload/.test(err.message));
  }
}

export function isNoResponders(err: unknown): boolean {
  return err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders());
}

export function isTimeout(err: unknown): boolean {
  return err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError);
}

export function nonPlain(err: unknown, code: 'VALIDATION_FAILED' | 'INTERNAL', reasonCode: string, what: string): unknown {
  if (!(err instanceof NonPlainDataError)) return err;
  return new ServiceError(code, reasonCode, `${what} is not plain data at ${err.path || '(root)'}: ${err.what}`);
}

