/**
 * `node dist/bench/control-plane/run.js`: issue 14's control-plane benchmark. For each row
 * count, on PostgreSQL: how long creating a branch of the project takes, how long merging a
 * proposal that adds one nullable field to the seeded entity takes, and what W1 (a granted
 * user's point read by id, the hot-path bench's workload, driven by wrk) sees meanwhile:
 *   (a) W1 alone (baseline),
 *   (b) W1 while `POST /api/branches` copies the project,
 *   (c) W1 while a proposal from that branch is created, approved and merged into main.
 * A window of (b) and (c) starts PRE_ROLL_MS before the first call and ends POST_ROLL_MS
 * after the last (wrk stopped with SIGINT), so its percentiles are those of the operation's
 * time, not diluted by a fixed-length run. See bench/README.md and docs/branches.md.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { intEnv } from '../config.js';
import { createScratchDatabase } from '../db.js';
import { exitAfterMinutes, freePort, gitCommit, killAllChildrenNow, startNodeServer, type ChildServer } from '../server-process.js';
import { bootstrap, resetTable, userToken, type Fixture } from '../hot-path/fixture.js';
import { CREATED_PREFIX, projectSchema } from '../hot-path/order-model.js';
import { ensureWrk, runWrk, type WrkResult } from '../hot-path/wrk.js';
import { probeWorkloads, workloadScripts } from '../hot-path/workloads.js';
import { addFieldOnBranch, createBranch, deleteBranch, proposeAndMerge, tableFile, type MergeTiming, type TableFile } from './operations.js';
import { cpuOf } from './cpu.js';
import { formatTable, type RoundResult, type RowCountResult } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const rootDir = resolve(here, '..', '..', '..');
const cfg = {
  rowCounts: (process.env.BENCH_ROW_COUNTS ?? '10000,100000,300000').split(',').map((x) => Number(x.trim())).filter((n) => Number.isInteger(n) && n >= 1000),
  durationS: intEnv('BENCH_DURATION_S', 5, 1),
  rounds: intEnv('BENCH_ROUNDS', 3, 1),
  warmupS: intEnv('BENCH_WARMUP_S', 2, 0),
  connections: intEnv('BENCH_CONNECTIONS', 16, 1),
  threads: intEnv('BENCH_THREADS', 2, 1),
  pool: intEnv('BENCH_PG_POOL', 10, 1),
  maxMinutes: intEnv('BENCH_MAX_MINUTES', 30, 1),
  adminDatabaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  verbose: process.env.BENCH_VERBOSE === '1',
};
const PRE_ROLL_MS = 500;
const POST_ROLL_MS = 250;
const HOST = '127.0.0.1';
const ADMIN_TOKEN = `bench-admin-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const SERVER_ENV_UNSET = ['DATABASE_URL', 'DATA_DIR', 'NATS_URL', 'PORT', 'HOST', 'GRPC_PORT', 'SERVICE_ADMIN_TOKEN', 'DB_POOL_SIZE'];

const log = (msg: string): void => console.log(`[cp-bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

function startPlinth(databaseUrl: string, grpcPort: number): Promise<ChildServer> {
  return startNodeServer({
    name: 'plinth', script: join(rootDir, 'dist', 'main.js'), cwd: rootDir, host: HOST,
    env: { DATABASE_URL: databaseUrl, SERVICE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', DB_POOL_SIZE: String(cfg.pool), GRPC_PORT: String(grpcPort) },
    unsetEnv: SERVER_ENV_UNSET, startTimeoutMs: 90_000, verbose: cfg.verbose,
  });
}

const wrkOpts = { threads: 0, connections: 0, latency: true } as const;

/** W1 for a fixed time (after a discarded warm-up): the baseline. */
async function steady(url: string, script: string): Promise<WrkResult> {
  const opts = { ...wrkOpts, threads: cfg.threads, connections: cfg.connections };
  if (cfg.warmupS > 0) await runWrk(url, script, { ...opts, durationS: cfg.warmupS });
  return runWrk(url, script, { ...opts, durationS: cfg.durationS });
}

/** W1 over exactly the time of `op` (plus the rolls): wrk runs until `op` is done, then gets SIGINT. */
async function during<T>(url: string, script: string, op: () => Promise<T>): Promise<{ op: T; w1: WrkResult }> {
  let finished!: () => void;
  const done = new Promise<void>((r) => (finished = r));
  const w1 = runWrk(url, script, { ...wrkOpts, threads: cfg.threads, connections: cfg.connections, durationS: 600, stopWhen: done.then(() => sleep(POST_ROLL_MS)) });
  await sleep(PRE_ROLL_MS);
  try {
    return { op: await op(), w1: await (finished(), w1) };
  } catch (err) {
    finished();
    await w1.catch(() => undefined);
    throw err;
  }
}

async function measureRowCount(server: ChildServer, databaseUrl: string, tmp: string, rows: number): Promise<RowCountResult> {
  log(`${rows} rows: seeding a fresh project through the batch route`);
  let t0 = Date.now();
  const f: Fixture = await bootstrap(server.url, ADMIN_TOKEN, rows);
  const schema = projectSchema(f.projectId);
  await resetTable(databaseUrl, schema, CREATED_PREFIX); // VACUUM ANALYZE after the seed
  const seedS = (Date.now() - t0) / 1000;
  log(`seeded in ${seedS.toFixed(1)} s (load ${load()})`);

  const token = await userToken(server.url, f);
  await probeWorkloads(server.url, f, token);
  const w1 = workloadScripts(tmp, f, token, `cp-${rows}`).W1;

  // Without load, with the CPU each cost (load-independent): a branch create, then a merge of
  // one nullable field add from it. The figure docs/branches.md had before is the create's.
  const idleName = `idle-${rows}`;
  const idleCreate = await cpuOf(server.pid, databaseUrl, () => createBranch(server.url, f, idleName));
  await addFieldOnBranch(server.url, f, idleName, [], 'pre');
  const idleMerge = await cpuOf(server.pid, databaseUrl, () => proposeAndMerge(server.url, f, idleName, 'pre'));
  await deleteBranch(server.url, f, idleName);
  log(`without load: branch create ${idleCreate.wallS.toFixed(3)} s (CPU ${idleCreate.serverCpuS.toFixed(2)} s server + ${idleCreate.dbCpuS.toFixed(2)} s database); ` +
    `proposal create+approve+merge ${idleMerge.wallS.toFixed(3)} s (CPU ${idleMerge.serverCpuS.toFixed(2)} s server + ${idleMerge.dbCpuS.toFixed(2)} s database)`);

  const rounds: RoundResult[] = [];
  for (let round = 1; round <= cfg.rounds; round++) rounds.push(await measureRound(server, databaseUrl, f, schema, w1, rows, round));
  return { rows, seedS, idleCreate, idleMerge, rounds, load: load() };
}

/** One round: W1 alone, W1 around a pause, W1 around a branch create, W1 around a proposal merging one field add. */
async function measureRound(server: ChildServer, databaseUrl: string, f: Fixture, schema: string, w1: string, rows: number, round: number): Promise<RoundResult> {
  const tag = `${rows} r${round}`;
  const baseline = await steady(server.url, w1);
  log(`${tag} (a) W1 baseline: ${baseline.reqPerSec.toFixed(0)} req/s, p50 ${baseline.p50Ms.toFixed(2)} ms, p99 ${baseline.p99Ms.toFixed(2)} ms (load ${load()})`);

  // The same window shape around a pause: wrk's own start inside a window (fresh connections, no
  // warm-up) is in every "during" figure, so this is what they compare with.
  const control = await during(server.url, w1, () => sleep(300));
  log(`${tag} (a') W1 over a ${control.w1.durationS.toFixed(2)} s window around a 300 ms pause: p50 ${control.w1.p50Ms.toFixed(2)} ms, p99 ${control.w1.p99Ms.toFixed(2)} ms, max ${control.w1.maxMs.toFixed(0)} ms`);

  const branch = `feat-${rows}-r${round}`;
  const create = await during(server.url, w1, () => createBranch(server.url, f, branch));
  log(`${tag} (b) branch create ${create.op.toFixed(3)} s; W1 over ${create.w1.durationS.toFixed(2)} s: p50 ${create.w1.p50Ms.toFixed(2)} ms, p99 ${create.w1.p99Ms.toFixed(2)} ms, max ${create.w1.maxMs.toFixed(0)} ms`);

  const field = `note${round}`;
  await addFieldOnBranch(server.url, f, branch, ['pre', ...Array.from({ length: round - 1 }, (_, i) => `note${i + 1}`)], field);
  const before: TableFile = await tableFile(databaseUrl, schema);
  const merge = await during(server.url, w1, (): Promise<MergeTiming> => proposeAndMerge(server.url, f, branch, field));
  const after: TableFile = await tableFile(databaseUrl, schema);
  log(`${tag} (c) proposal create ${merge.op.createS.toFixed(3)} s, approve ${merge.op.approveS.toFixed(3)} s, merge ${merge.op.mergeS.toFixed(3)} s; W1 over ${merge.w1.durationS.toFixed(2)} s: p50 ${merge.w1.p50Ms.toFixed(2)} ms, p99 ${merge.w1.p99Ms.toFixed(2)} ms, max ${merge.w1.maxMs.toFixed(0)} ms`);
  const rewritten = before.relfilenode !== after.relfilenode;
  log(`${tag} main's Order table across the merge: relfilenode ${before.relfilenode} → ${after.relfilenode} (${rewritten ? 'REWRITTEN' : 'same file: metadata-only'}), ${before.bytes} → ${after.bytes} bytes, ${before.columns} → ${after.columns} columns`);
  if (after.columns !== before.columns + 1) throw new Error(`the merge did not add one column to main's table (${before.columns} → ${after.columns})`);
  // The branch has done its job; dropping it keeps later rounds' database the same size.
  await deleteBranch(server.url, f, branch);
  return { createS: create.op, merge: merge.op, baseline, idleWindow: control.w1, duringCreate: create.w1, duringMerge: merge.w1, tableBefore: before, tableAfter: after, rewritten };
}

async function main(): Promise<number> {
  ensureWrk();
  exitAfterMinutes('cp-bench', cfg.maxMinutes);
  const commit = gitCommit(rootDir);
  const startLoad = load();
  log(`row counts ${cfg.rowCounts.join(', ')}, ${cfg.rounds} rounds each; W1 wrk -t${cfg.threads} -c${cfg.connections} --latency, baseline ${cfg.warmupS} s warm-up + ${cfg.durationS} s; pool ${cfg.pool}; commit ${commit}; load ${startLoad}`);
  const db = await createScratchDatabase(cfg.adminDatabaseUrl);
  const tmp = mkdtempSync(join(tmpdir(), 'plinth-cp-bench-'));
  const results: RowCountResult[] = [];
  let server: ChildServer | undefined;
  try {
    server = await startPlinth(db.url, await freePort(HOST));
    for (const rows of cfg.rowCounts) results.push(await measureRowCount(server, db.url, tmp, rows));
  } finally {
    await server?.stop().catch(() => {});
    await db.drop().catch((e: Error) => console.error(`cp-bench: drop ${db.name}: ${e.message}`));
    rmSync(tmp, { recursive: true, force: true });
  }
  const text = formatTable(results, { ...cfg, commit, startLoad, endLoad: load(), preRollMs: PRE_ROLL_MS, postRollMs: POST_ROLL_MS });
  console.log(text);
  const out = join(rootDir, 'bench', 'results', 'control-plane.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), commit, settings: cfg, results }, null, 2) + '\n');
  log(`JSON written to ${out}`);
  const windows = results.flatMap((r) => r.rounds.flatMap((x) => [x.baseline, x.idleWindow, x.duringCreate, x.duringMerge]));
  return windows.some((w) => w.errors > w.requests * 0.01) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`cp-bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    killAllChildrenNow();
    process.exit(1);
  },
);
