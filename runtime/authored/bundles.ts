import { createHash } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

/** The name of a compiled bundle: the hex sha256 of its code. */
export const bundleSha256 = (code: string): string => createHash('sha256').update(code, 'utf8').digest('hex');

/** Stores a compiled bundle once per project (content-addressed; storing it again is a no-op). Answers its sha256. */
export async function storeBundle(db: SqlExecutor, projectId: string, code: string): Promise<string> {
  const sha = bundleSha256(code);
  await db.query(`INSERT INTO ${S}.handler_bundles (project_id, sha256, code) VALUES ($1, $2, $3) ON CONFLICT (project_id, sha256) DO NOTHING`, [projectId, sha, code]);
  return sha;
}

/**
 * A bundle's code, or null if the project has none by that name. Bundles are immutable,
 * so a node keeps what it read (bounded: least recently read goes first).
 */
export async function loadBundle(db: SqlExecutor, projectId: string, sha: string): Promise<string | null> {
  const key = `${projectId}/${sha}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const res = await db.query<{ code: string }>(`SELECT code FROM ${S}.handler_bundles WHERE project_id = $1 AND sha256 = $2`, [projectId, sha]);
  const code = res.rows[0]?.code ?? null;
  if (code === null) return null;
  cache.set(key, code);
  cachedChars += code.length;
  for (const [k, v] of cache) {
    if (cachedChars <= MAX_CACHED_CHARS) break;
    cache.delete(k);
    cachedChars -= v.length;
  }
  return code;
}

/** What a node keeps of bundles in memory (characters of code; bundles are small, a publish caps them). */
const MAX_CACHED_CHARS = 64 * 1024 * 1024;
const cache = new Map<string, string>();
let cachedChars = 0;
