/**
 * DATA_DIR is owner-only: PGlite's files (the WAL among them) hold the project
 * JWT keys and the secrets master key. A fresh directory comes up 0700 with
 * files ≤ 0600, and a directory left with loose modes is tightened at start.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type TestServer } from '../support/server.js';

/** Every path under `dir` (dir included) whose mode lets group or others in. */
function looseModes(dir: string): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    if ((st.mode & 0o077) !== 0) out.push(`${p} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(dir);
  return out;
}

function loosen(p: string): void {
  const st = lstatSync(p);
  if (st.isSymbolicLink()) return;
  chmodSync(p, st.isDirectory() ? 0o777 : 0o666);
  if (st.isDirectory()) for (const n of readdirSync(p)) loosen(join(p, n));
}

let first: TestServer | undefined;
let second: TestServer | undefined;
after(async () => {
  await second?.stop();
  await first?.close();
});

it('a persistent PGlite DATA_DIR is 0700 and its files 0600, also after a restart on a loosened directory', async () => {
  const oldUmask = process.umask(0o000); // the worst case: whatever PGlite creates would be 0666/0777
  try {
    first = await startServer({ persistent: true, env: { SERVICE_ADMIN_TOKEN: '' } });
    const admin = await fetch(`${first.url}/api/TenantRecord`, {
      method: 'POST', headers: { authorization: `Bearer ${first.node.admin.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'modes', name: 'Modes' }),
    });
    assert.equal(admin.status, 201);
    assert.ok(readdirSync(first.dataDir).includes('admin-token'));
    assert.ok(readdirSync(join(first.dataDir, 'pglite')).length > 0, 'PGlite wrote its files');
    assert.equal(lstatSync(first.dataDir).mode & 0o777, 0o700);
    assert.deepEqual(looseModes(first.dataDir), []);
    await first.stop();

    // An existing DATA_DIR with loose modes is tightened at start.
    process.umask(0o000);
    loosen(first.dataDir);
    second = await startServer({ reuse: { dataDir: first.dataDir, databaseUrl: null }, env: { SERVICE_ADMIN_TOKEN: '' } });
    assert.deepEqual(looseModes(first.dataDir), []);
  } finally {
    process.umask(oldUmask);
  }
});
