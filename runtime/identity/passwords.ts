import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ServiceError } from '../errors/service-error.js';
import { passwordHashGate } from './hash-gate.js';

/**
 * Password hashing with scrypt (a slow, salted, memory-hard hash).
 *
 * Stored form: `scrypt$<N>$<r>$<p>$<salt b64url>$<key b64url>`. The
 * parameters travel with the hash so they can be raised later without
 * invalidating existing hashes (verify reads them from the stored string).
 */
export const SCRYPT_N = 16384;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;
export const SALT_BYTES = 16;
export const KEY_BYTES = 64;

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/** Upper bounds on parameters read back from a stored hash (a corrupt row must not pin the CPU). */
const MAX_N = 1 << 20;
const MAX_R = 32;
const MAX_P = 16;

/** scrypt on libuv's thread pool (never on the event loop), at most a few at once (HashGate). */
function scryptAsync(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return passwordHashGate.run(() => new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  }));
}

const memFor = (N: number, r: number): number => 128 * N * r * 2 + 1024 * 1024;

/** Whether a value is acceptable as a new password (string, 8..256 characters). */
export function isAcceptablePassword(pw: unknown): pw is string {
  return typeof pw === 'string' && pw.length >= PASSWORD_MIN_LENGTH && pw.length <= PASSWORD_MAX_LENGTH;
}

export async function hashPassword(pw: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptAsync(pw, salt, KEY_BYTES, { N: SCRYPT_N, r: SCRYPT_R, p: SCRYPT_P, maxmem: memFor(SCRYPT_N, SCRYPT_R) });
  return `scrypt$${SCRYPT_N}$${SCRYPT_R}$${SCRYPT_P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
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
