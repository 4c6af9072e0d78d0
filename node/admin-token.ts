import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { isInMemory } from './config.js';

export interface AdminToken {
  token: string;
  /** Where it came from, so the banner can say whether it was just created. */
  source: 'env' | 'file' | 'generated';
  path: string | null;
}

/**
 * SERVICE_ADMIN_TOKEN if set; else the token stored in DATA_DIR; else a new
 * one, written with mode 0600 (CONTRACT: Running). In-memory mode keeps it
 * in memory only.
 */
export function loadAdminToken(configured: string | null, dataDir: string): AdminToken {
  if (configured !== null) return { token: configured, source: 'env', path: null };
  const token = `plinth_admin_${randomBytes(24).toString('base64url')}`;
  if (isInMemory(dataDir)) return { token, source: 'generated', path: null };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'admin-token');
  if (existsSync(path)) return { token: readFileSync(path, 'utf8').trim(), source: 'file', path };
  writeFileSync(path, token + '\n', { mode: 0o600, flag: 'wx' });
  return { token, source: 'generated', path };
}
