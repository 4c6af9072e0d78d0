import { randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../../storage/index.js';

/** Bytes of a project's HS256 signing key. */
export const SIGNING_KEY_BYTES = 32;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Per-node cache: projectId → key bytes. Keys never change once created, so entries never go stale. */
const cache = new Map<string, Uint8Array>();

const decode = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64url'));

/**
 * The project's signing key, created on first use. `INSERT … ON CONFLICT DO
 * NOTHING` then `SELECT`: when two nodes race, both read the one row that won.
 * Throws when the project does not exist (foreign key).
 */
export async function projectSigningKey(db: SqlExecutor, projectId: string): Promise<Uint8Array> {
  const hit = cache.get(projectId);
  if (hit !== undefined) return hit;
  await db.query(
    'INSERT INTO plinth.project_keys (project_id, signing_key) VALUES ($1, $2) ON CONFLICT (project_id) DO NOTHING',
    [projectId, randomBytes(SIGNING_KEY_BYTES).toString('base64url')],
  );
  const key = await existingProjectSigningKey(db, projectId);
  if (key === null) throw new Error(`signing key for project ${projectId} missing after insert`);
  return key;
}

/** The project's signing key if one exists; never creates one (token verification path). */
export async function existingProjectSigningKey(db: SqlExecutor, projectId: string): Promise<Uint8Array | null> {
  const hit = cache.get(projectId);
  if (hit !== undefined) return hit;
  if (!UUID_RE.test(projectId)) return null;
  const res = await db.query<{ signing_key: string }>('SELECT signing_key FROM plinth.project_keys WHERE project_id = $1', [projectId]);
  const row = res.rows[0];
  if (row === undefined) return null;
  const key = decode(row.signing_key);
  if (key.length < SIGNING_KEY_BYTES) return null;
  cache.set(projectId, key);
  return key;
}

/** The key if this node has it cached (no query): the verified-token cache checks it is still current. */
export function cachedProjectSigningKey(projectId: string): Uint8Array | undefined {
  return cache.get(projectId);
}

/** Drops a cached key (project deleted). */
export function forgetProjectSigningKey(projectId: string): void {
  cache.delete(projectId);
}
