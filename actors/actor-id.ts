import { ServiceError } from '../runtime/errors/service-error.js';
import { ActorReason } from './errors.js';

/** Prefix of every actor's request subject (cluster transport routes on it). */
export const ACTOR_SUBJECT_PREFIX = 'plinth.actor.';

// A kind is declared in code, so it is held to a token that needs no escaping
// in a NATS subject, a log field or the `${kind}/${key}` string form.
export const ACTOR_KIND_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;
const SAFE_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Identity of one virtual actor. Routing runs on every message, so the string
 * form, subject and shard are computed once here and never again.
 */
export class ActorId {
  readonly kind: string;
  readonly key: string;
  /** `${kind}/${key}`: the map key of a local activation and the lease key in cluster mode. */
  readonly str: string;
  /** NATS subject the actor's owner listens on; the key is escaped so it is exactly one token. */
  readonly subject: string;
  /** FNV-1a 32-bit over the UTF-8 bytes of `str`: stable across processes and languages. */
  readonly shard: number;

  constructor(kind: string, key: string) {
    if (typeof kind !== 'string' || !ACTOR_KIND_PATTERN.test(kind)) {
      throw new ServiceError('VALIDATION_FAILED', ActorReason.InvalidId, `invalid actor kind ${JSON.stringify(kind)}`);
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new ServiceError('VALIDATION_FAILED', ActorReason.InvalidId, `invalid actor key for kind ${kind}`);
    }
    this.kind = kind;
    this.key = key;
    this.str = `${kind}/${key}`;
    this.subject = ACTOR_SUBJECT_PREFIX + kind + '.' + subjectToken(key, kind);
    this.shard = fnv1a32(this.str);
  }

  equals(other: ActorId): boolean {
    return this.str === other.str;
  }

  toString(): string {
    return this.str;
  }
}

/**
 * Percent-encoding keeps the mapping injective (two keys never share a
 * subject); `.` separates tokens and `*`/`>` are wildcards, which
 * encodeURIComponent leaves alone, so they are encoded on top.
 */
function subjectToken(key: string, kind: string): string {
  if (SAFE_KEY.test(key)) return key;
  let encoded: string;
  try {
    encoded = encodeURIComponent(key);
  } catch {
    // Only a lone UTF-16 surrogate makes encodeURIComponent throw.
    throw new ServiceError('VALIDATION_FAILED', ActorReason.InvalidId, `invalid actor key for kind ${kind}`);
  }
  return encoded.replace(/[.*!~'()]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** FNV-1a 32-bit over the UTF-8 encoding of `s`, without allocating a buffer. */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    let c = s.codePointAt(i)!;
    if (c > 0xffff) i++;
    if (c < 0x80) {
      h = Math.imul(h ^ c, 0x01000193);
    } else if (c < 0x800) {
      h = Math.imul(h ^ (0xc0 | (c >> 6)), 0x01000193);
      h = Math.imul(h ^ (0x80 | (c & 0x3f)), 0x01000193);
    } else if (c < 0x10000) {
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // lone surrogate: hash as U+FFFD, like TextEncoder
      h = Math.imul(h ^ (0xe0 | (c >> 12)), 0x01000193);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), 0x01000193);
      h = Math.imul(h ^ (0x80 | (c & 0x3f)), 0x01000193);
    } else {
      h = Math.imul(h ^ (0xf0 | (c >> 18)), 0x01000193);
      h = Math.imul(h ^ (0x80 | ((c >> 12) & 0x3f)), 0x01000193);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), 0x01000193);
      h = Math.imul(h ^ (0x80 | (c & 0x3f)), 0x01000193);
    }
  }
  return h >>> 0;
}
