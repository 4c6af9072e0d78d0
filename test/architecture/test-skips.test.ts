/**
 * Issue 22, finding 11: no suite skips silently. Every suite decides whether
 * its outside services are there through one helper
 * (test/support/services.ts), and `npm test`'s runner names, at the start
 * and at the end of the run, the suites that cannot run and why.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

// dist/test/architecture/ → the repository root.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

it('every suite decides about PostgreSQL, nats-server and CI=true through test/support/services.ts only', () => {
  // A suite's own check (CI, TEST_DATABASE_URL, nats-server) would let it skip differently from what the runner reports.
  const own = /process\.env\.CI\b|natsServerAvailable\(|^if \(TEST_DATABASE_URL/m;
  const offenders = sources(join(ROOT, 'test'))
    .filter((f) => !f.endsWith(join('support', 'services.ts')) && !f.endsWith(join('support', 'nats-cluster.ts')))
    .filter((f) => own.test(readFileSync(f, 'utf8')));
  assert.deepEqual(offenders.map((f) => f.slice(ROOT.length + 1)), []);
});

it("npm test's runner names a suite it cannot run, and why, at the start and at the end", async () => {
  // A tree with one suite that needs nats-server, run with NATS_SERVER_BIN naming a file that does not exist.
  const dir = mkdtempSync(join(tmpdir(), 'plinth-runner-'));
  try {
    mkdirSync(join(dir, 'dist', 'test', 'cluster'), { recursive: true });
    symlinkSync(join(ROOT, 'dist', 'test', 'cluster', 'grants-cluster.test.js'), join(dir, 'dist', 'test', 'cluster', 'grants-cluster.test.js'));
    const env: NodeJS.ProcessEnv = { ...process.env, NATS_SERVER_BIN: join(dir, 'no-nats-server') };
    delete env.CI;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [join(ROOT, 'dist', 'scripts', 'run-tests.js')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d) => { text += String(d); });
      child.stderr.on('data', (d) => { text += String(d); });
      child.on('error', reject);
      child.on('exit', () => resolve(text));
    });
    const loud = out.split('\n').filter((l) => l.startsWith('# SKIPPED: 1 suite needs nats-server'));
    assert.equal(loud.length, 2, out);
    assert.match(loud[0]!, /NATS_SERVER_BIN=.*no-nats-server does not exist\): cluster\/grants-cluster$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
