import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ServiceError } from '../errors/service-error.js';
import { HASHES_QUEUED_PER_SLOT, passwordHashGate } from './hash-gate.js';

/**
 * Password hashing with scrypt (a slow, salted, memory-hard hash).
 *
 * Stored form: `scrypt$<N>$<r>$<p>$<salt b64url>$<key b64url>`. The
 * parameters travel with the hash so they can be raised later without
 * invalidating existing hashes (verify reads them from the stored string),
 * and a login that verifies against weaker ones rehashes (`needsRehash`).
 *
 * Cost: N = 2^17, r = 8, p = 1, OWASP's minimum for scrypt: 128 MiB of memory
 * per hash (128·N·r bytes). PASSWORD_HASH_COST (log2 N) can lower it down to
 * 2^14 for test suites only; it never goes below that.
 */
/** log2 of scrypt's N by default: OWASP's minimum, N = 2^17. */
export const DEFAULT_HASH_COST = 17;
/** The lowest PASSWORD_HASH_COST accepted (2^14, this platform's cost before issue 22): test suites only. */
export const MIN_HASH_COST = 14;
/** The highest (2^20: 1 GiB per hash). */
export const MAX_HASH_COST = 20;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;
export const SALT_BYTES = 16;
export const KEY_BYTES = 64;

/** N for new hashes; set once at start from PASSWORD_HASH_COST (process-wide, like the gate). */
let scryptN = 2 ** DEFAULT_HASH_COST;

/** Sets the cost of new hashes (log2 N, MIN_HASH_COST..MAX_HASH_COST; the node's config checks the range). */
export function setPasswordHashCost(log2N: number): void {
  if (!Number.isInteger(log2N) || log2N < MIN_HASH_COST || log2N > MAX_HASH_COST) throw new RangeError(`password hash cost must be ${MIN_HASH_COST}..${MAX_HASH_COST}`);
  if (2 ** log2N !== scryptN) dummy = null;
  scryptN = 2 ** log2N;
}

/** N of new hashes. */
export const currentScryptN = (): number => scryptN;

/**
 * The gate's default queue for `concurrency` running hashes: 16 hash times at
 * the default cost per slot, so a cheaper (test) cost queues proportionally
 * more (128 per slot at 2^14) and the longest wait stays the same.
 */
export const defaultPasswordHashQueue = (concurrency: number): number =>
  HASHES_QUEUED_PER_SLOT * concurrency * Math.max(1, 2 ** DEFAULT_HASH_COST / scryptN);

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/** Upper bounds on parameters read back from a stored hash (a corrupt row must not pin the CPU). */
const MAX_N = 2 ** MAX_HASH_COST;
const MAX_R = 32;
const MAX_P = 16;

/** scrypt on libuv's thread pool (never on the event loop), at most a few at once (HashGate). */
function scryptAsync(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return passwordHashGate.run(() => new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  }));
}

/** scrypt's own limit on what one hash may allocate: its 128·N·r bytes, with headroom. */
const memFor = (N: number, r: number): number => 128 * N * r * 2 + 1024 * 1024;

/** Whether a value is acceptable as a new password (string, 8..256 characters). */
export function isAcceptablePassword(pw: unknown): pw is string {
  return typeof pw === 'string' && pw.length >= PASSWORD_MIN_LENGTH && pw.length <= PASSWORD_MAX_LENGTH;
}

export async function hashPassword(pw: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const N = scryptN;
  const key = await scryptAsync(pw, salt, KEY_BYTES, { N, r: SCRYPT_R, p: SCRYPT_P, maxmem: memFor(N, SCRYPT_R) });
  return `scrypt$${N}$${SCRYPT_R}$${SCRYPT_P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

interface ParsedHash { N: number; r: number; p: number; salt: Buffer; key: Buffer }

function parseStored(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (!Number.isInteger(N) || !Number.isInteger(r) || !Number.isInteger(p)) return null;
  if (N < 2 || N > MAX_N || (N & (N - 1)) !== 0 || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return null;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const key = Buffer.from(parts[5]!, 'base64url');
  if (salt.length < 8 || (key.length !== 32 && key.length !== 64)) return null;
  return { N, r, p, salt, key };
}

/** Checks a password against a stored hash in constant time. False (never a throw) for a malformed hash. */
export async function verifyPassword(pw: string, stored: string): Promise<boolean> {
  const parsed = parseStored(stored);
  if (parsed === null || typeof pw !== 'string') return false;
  const { N, r, p, salt, key } = parsed;
  let derived: Buffer;
  try {
    derived = await scryptAsync(pw, salt, key.length, { N, r, p, maxmem: memFor(N, r) });
  } catch (err) {
    if (ServiceError.is(err)) throw err; // the hash gate is full: 503, not a wrong password
    return false;
  }
  return timingSafeEqual(derived, key);
}

/**
 * Whether a stored hash is weaker than what new hashes get (a smaller N, r or
 * p, or a shorter key): a login that just verified the password rehashes it.
 * A stronger one (made before the cost was lowered for tests) is kept.
 */
export function needsRehash(stored: string): boolean {
  const parsed = parseStored(stored);
  if (parsed === null) return false;
  return parsed.N < scryptN || parsed.r < SCRYPT_R || parsed.p < SCRYPT_P || parsed.key.length < KEY_BYTES;
}

let dummy: Promise<string> | null = null;

/**
 * A real hash of a random password, made once per process. Login verifies
 * against it when the email is unknown, so an unknown email costs the same
 * time as a wrong password and the answers cannot be told apart.
 */
export function dummyPasswordHash(): Promise<string> {
  if (dummy === null) {
    const made = hashPassword(randomBytes(24).toString('base64url'));
    dummy = made;
    // A refused first attempt (hash gate full) must not be remembered.
    made.catch(() => { if (dummy === made) dummy = null; });
  }
  return dummy;
}
