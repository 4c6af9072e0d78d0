import { Packr } from 'msgpackr';
import { ServiceError } from '../runtime/errors/service-error.js';
import type { ActorEnvelope } from '../actors/index.js';
import type { WireError } from './wire-error.js';

/**
 * msgpackr encoding of actor messages and replies on NATS.
 *
 * Records (msgpackr's shared-structure extension) are off: they need both
 * sides to share structure tables, and nodes of different ages talk to each
 * other. Envelopes and replies are short arrays with a version tag in front,
 * so a field can be added without breaking a node that runs older code.
 */

/** What the owner of an actor sends back: the handler's value, or a declared error as data. */
export type ActorReply = { ok: true; value: unknown } | { ok: false; error: WireError };

const V1 = 1;
const OK = 1;
const ERR = 0;

const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, bundleStrings: false });

/** `[1, kind, key, type, payload, correlationId | null]` */
export function encodeEnvelope(msg: ActorEnvelope): Uint8Array {
  return packr.pack([V1, msg.target.kind, msg.target.key, msg.type, msg.payload, msg.correlationId ?? null]);
}

export function decodeEnvelope(bytes: Uint8Array): ActorEnvelope {
  const v: unknown = unpack(bytes, 'envelope');
  if (!Array.isArray(v) || v[0] !== V1 || v.length < 6 || typeof v[1] !== 'string' || typeof v[2] !== 'string' || typeof v[3] !== 'string') {
    throw malformed('envelope');
  }
  const correlationId: unknown = v[5];
  return {
    target: { kind: v[1], key: v[2] },
    type: v[3],
    payload: v[4],
    correlationId: typeof correlationId === 'string' ? correlationId : undefined,
  };
}

/** `[1, 1, value]` or `[1, 0, wireError]` */
export function encodeReply(reply: ActorReply): Uint8Array {
  return packr.pack(reply.ok ? [V1, OK, reply.value] : [V1, ERR, reply.error]);
}

/** A malformed reply throws a ServiceError (INTERNAL); the error inside a well-formed one is returned as data. */
export function decodeReply(bytes: Uint8Array): ActorReply {
  const v: unknown = unpack(bytes, 'reply');
  if (!Array.isArray(v) || v[0] !== V1 || v.length < 3) throw malformed('reply');
  if (v[1] === OK) return { ok: true, value: v[2] };
  if (v[1] === ERR) return { ok: false, error: v[2] as WireError };
  throw malformed('reply');
}

function unpack(bytes: Uint8Array, what: string): unknown {
  try {
    return packr.unpack(bytes);
  } catch {
    throw malformed(what);
  }
}

function malformed(what: string): ServiceError {
  return new ServiceError('INTERNAL', 'Actor.MalformedMessage', `malformed actor ${what} on the wire`);
}
