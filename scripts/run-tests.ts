/**
 * `npm test`'s runner: every compiled suite under dist/test, in two lanes.
 *
 * - Suites that start NATS servers (they import test/support/nats-cluster)
 *   kill and restart servers and wait for leader elections: they run one
 *   file at a time, as they always did.
 * - Every other suite owns its server, database and ports, so two files run
 *   at once (`TEST_CONCURRENCY`, default 2): on two cores most of a suite's
 *   time is spent waiting on sockets and PostgreSQL, and the wall time of the
 *   whole run drops by about a third.
 *
 * Each lane is one `node --test` run (its own TAP report); the exit code is
 * the first failing lane's. Node 20's `--test` with a `**` glob skips files,
 * so the files are listed here.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = 'dist/test';
/** Per test; the NATS fault suites bounce servers when nats-server 2.9.10 leaves JetStream unhealthy (test/support/nats-cluster.ts). */
const TIMEOUT_MS = '900000';

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const startsNats = (file: string): boolean => /support\/nats-cluster\.js['"]/.test(readFileSync(file, 'utf8'));

function lane(files: string[], concurrency: number): Promise<number> {
  if (files.length === 0) return Promise.resolve(0);
  const args = ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TIMEOUT_MS}`, ...files];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

const files = testFiles(ROOT);
const serial = files.filter(startsNats);
const parallel = files.filter((f) => !serial.includes(f));
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 2));
console.log(`# ${parallel.length} suites ${concurrency} at a time, then ${serial.length} suites that start NATS servers one at a time`);
const first = await lane(parallel, concurrency);
const second = await lane(serial, 1);
process.exitCode = first !== 0 ? first : second;
