import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Owner-only: DATA_DIR holds the admin token and PGlite's files (project JWT keys and the secrets master key among them). */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/**
 * Creates DATA_DIR owner-only and tightens whatever is already in it: every
 * directory 0700, every file at most 0600 (group and other bits cleared).
 * Symbolic links are not followed, so a link inside the tree cannot make us
 * chmod something outside it.
 *
 * Also sets the process umask to 077 so files created later (PGlite's new
 * WAL segments and relation files) are born owner-only. The walk runs again
 * after PGlite opened, for files it created with explicit modes.
 */
export function secureDataDir(dir: string): void {
  process.umask(process.umask() | 0o077);
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  tighten(dir);
}

function tighten(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    if ((st.mode & 0o777) !== DATA_DIR_MODE) chmodSync(path, DATA_DIR_MODE);
    for (const name of readdirSync(path)) tighten(join(path, name));
    return;
  }
  if ((st.mode & 0o077) !== 0) chmodSync(path, st.mode & DATA_FILE_MODE);
}
