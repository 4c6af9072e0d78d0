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
 *
 * Services: with TEST_DATABASE_URL unset, PostgreSQL at the machine's default
 * address is used when it answers; nats-server is looked up as the suites
 * do (test/support/services.ts). What still cannot run is named in one loud
 * line at the start and again at the end.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_OPERATIONS } from '../runtime/operations/catalog.js';
import { DEFAULT_TEST_DATABASE_URL, findNatsServer, postgresAnswers, serviceAvailable, servicesRequired, whyMissing, type Service } from '../test/support/services.js';

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
/**
 * Suites that measure another tenant's tail latency while they attack the server (p99 < 250 ms
 * and the like), or a process's memory, say `// test-lane: alone` in their source: next to another
 * suite on two cores they measure that suite (CI saw 259 ms), so they run one at a time with the
 * NATS suites.
 */
const runsAlone = (file: string): boolean => /\/\/ test-lane: alone/.test(readFileSync(file, 'utf8'));

function lane(files: string[], concurrency: number): Promise<number> {
  if (files.length === 0) return Promise.resolve(0);
  const args = ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TIMEOUT_MS}`, ...files];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

/** Fills TEST_DATABASE_URL and NATS_SERVER_BIN (inherited by the lanes) from what this machine has; says where each came from. */
async function findServices(): Promise<string[]> {
  const found: string[] = [];
  if ((process.env.TEST_DATABASE_URL ?? '') !== '') found.push('PostgreSQL from TEST_DATABASE_URL');
  else if (await postgresAnswers(DEFAULT_TEST_DATABASE_URL)) {
    process.env.TEST_DATABASE_URL = DEFAULT_TEST_DATABASE_URL;
    found.push(`PostgreSQL at ${DEFAULT_TEST_DATABASE_URL} (TEST_DATABASE_URL unset; it answered)`);
  }
  const nats = findNatsServer();
  if (nats !== null) {
    process.env.NATS_SERVER_BIN = nats;
    found.push(`nats-server at ${nats}`);
  }
  return found;
}

/** The services a compiled suite needs, read from its calls to the one skip helper (and forEachBackend's PostgreSQL half). */
function needs(file: string): { whole: Set<Service>; postgresHalf: boolean } {
  const text = readFileSync(file, 'utf8');
  const whole = new Set<Service>();
  for (const m of text.matchAll(/(?:servicesSkip\(([^)]*)\)|withServices\([^[]*\[([^\]]*)\])/g)) {
    for (const s of ['postgres', 'nats'] as const) if ((m[1] ?? m[2] ?? '').includes(`'${s}'`)) whole.add(s);
  }
  return { whole, postgresHalf: /\bforEachBackend\(/.test(text) };
}

const suites = (n: number): string => `${n} ${n === 1 ? 'suite' : 'suites'}`;

/** One loud line per group of suites that will not run, and why; null when everything runs. */
function skippedReport(files: string[]): string | null {
  if (servicesRequired()) return null;
  const lines: string[] = [];
  const name = (f: string): string => f.slice(ROOT.length + 1).replace(/\.test\.js$/, '');
  for (const service of ['postgres', 'nats'] as const) {
    if (serviceAvailable(service)) continue;
    const why = service === 'postgres' ? `${whyMissing(service)} and nothing answers at ${DEFAULT_TEST_DATABASE_URL}` : whyMissing(service);
    const whole = files.filter((f) => needs(f).whole.has(service));
    if (whole.length > 0) lines.push(`# SKIPPED: ${suites(whole.length)} need${whole.length === 1 ? 's' : ''} ${why}: ${whole.map(name).join(', ')}`);
    if (service === 'postgres') {
      const halves = files.filter((f) => needs(f).postgresHalf);
      if (halves.length > 0) lines.push(`# SKIPPED: the [postgres] half of ${suites(halves.length)} (they run on PGlite only), for the same reason`);
    }
  }
  return lines.length === 0 ? null : lines.join('\n');
}

/**
 * Operations whose success no REST call can produce, so the answer check
 * cannot meet them: the realtime WebSocket (its upgrade is served by the
 * realtime adapter and tested by the realtime suites), and custom operations,
 * which answer 404 until they can be defined (issue 24).
 */
const NO_REST_SUCCESS = new Set(['Platform.NotFound', ...PLATFORM_OPERATIONS.filter((op) => op.contract.output.upgrade === true).map((op) => op.id)]);

/**
 * Every test server checks its declared operations' answers against their
 * contracts (CHECK_ANSWERS); this sums which operations the suites met. An
 * operation no suite called successfully fails the run (when every suite ran):
 * every declared answer is checked, not a sample.
 */
function answerCoverage(dir: string): { line: string; complete: boolean } {
  const met = new Set(readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter((l) => l !== '')));
  const unmet = PLATFORM_OPERATIONS.map((op) => op.id).filter((id) => !met.has(id) && !NO_REST_SUCCESS.has(id));
  const line = `# answers checked against their contracts: ${met.size} of ${PLATFORM_OPERATIONS.length} declared operations (${[...NO_REST_SUCCESS].join(', ')} have no successful REST answer)`;
  return unmet.length === 0 ? { line, complete: true } : { line: `${line}; no suite met a successful answer of: ${unmet.join(', ')}`, complete: false };
}

const answersLog = mkdtempSync(join(tmpdir(), 'plinth-answers-'));
process.env.CHECK_ANSWERS_LOG = answersLog;
const found = await findServices();
const files = testFiles(ROOT);
const serial = files.filter((f) => startsNats(f) || runsAlone(f));
const parallel = files.filter((f) => !serial.includes(f));
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 2));
const skipped = skippedReport(files);
console.log(`# services: ${found.length === 0 ? 'none' : found.join('; ')}${servicesRequired() ? ' (CI=true: a suite whose service is missing fails)' : ''}`);
if (skipped !== null) console.log(skipped);
console.log(`# ${parallel.length} suites ${concurrency} at a time, then ${serial.length} suites that start NATS servers or measure tail latency one at a time`);
const first = await lane(parallel, concurrency);
const second = await lane(serial, 1);
const coverage = answerCoverage(answersLog);
console.log(coverage.line);
rmSync(answersLog, { recursive: true, force: true });
if (skipped !== null) console.log(skipped);
// A skipped suite leaves its operations unmet: the gap is only a failure when everything ran.
process.exitCode = first !== 0 ? first : second !== 0 ? second : coverage.complete || skipped !== null ? 0 : 1;
