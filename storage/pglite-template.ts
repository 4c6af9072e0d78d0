import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * A freshly initialized PGlite data directory, kept as a tarball so that an in-memory
 * database starts from it instead of running initdb: initdb takes about 2 s here, loading
 * the 40 MB tarball about 0.5 s (measured; docs/performance.md "Embedded memory"). Every
 * test server and `DATA_DIR=memory:` node starts in memory, so this is most of a start.
 *
 * The tarball is cached in the OS temp directory, named after the PGlite build it came from
 * (a new version initializes differently), written to a temporary name and renamed, so a
 * process never reads a half-written one. It holds an empty cluster only: no data, no keys.
 * Any failure to read or write it falls back to initdb.
 */
const templatePath = ((): string | null => {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    const s = statSync(entry);
    return join(tmpdir(), `plinth-pglite-template-${s.size}-${Math.round(s.mtimeMs)}.tar`);
  } catch {
    return null;
  }
})();

/**
 * The tarball of a fresh cluster, or null when none can be had (then the caller runs initdb).
 * Read from disk on each call (tens of ms) rather than kept: a node keeps no 40 MB copy.
 */
export async function freshClusterTarball(): Promise<Blob | null> {
  if (templatePath === null) return null;
  try {
    return new Blob([readFileSync(templatePath)]);
  } catch {
    // Not made yet (or unreadable): make it below.
  }
  try {
    const db = new PGlite();
    await db.waitReady;
    const tar = await db.dumpDataDir('none');
    await db.close();
    const tmp = `${templatePath}.${process.pid}.tmp`;
    writeFileSync(tmp, new Uint8Array(await tar.arrayBuffer()), { mode: 0o600 });
    renameSync(tmp, templatePath);
    return tar;
  } catch {
    return null;
  }
}
