/**
 * `npm run bench`: start the Plinth server on each backend, seed it through the REST API,
 * drive point read / filtered+sorted list / create with autocannon, then (PostgreSQL) the same
 * workloads against a bare node:http + pg handler on the same table, and report req/s,
 * p50/p99 and the ratio to that baseline. See bench/README.md.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapProject, seedItems, type Fixture } from './bootstrap.js';
import { loadConfig, type BenchConfig } from './config.js';
import { analyzeItems, createScratchDatabase, deleteCreatedItems } from './db.js';
import { projectSchema } from './item-model.js';
import { formatBackend, type BackendRun } from './report.js';
import { writeResults } from './results-file.js';
import { freePort, killAllChildrenNow, startNodeServer, type ChildServer } from './server-process.js';
import { WORKLOADS, runWorkload, type Target, type WorkloadResult } from './workloads.js';
import { combineSegments, segmentOrder, type TargetKind } from './rounds.js';

const SEED_CONCURRENCY = 16;
/** Variables that would change which storage/transport the server picks. */
const SERVER_ENV_UNSET = ['DATABASE_URL', 'DATA_DIR', 'NATS_URL', 'PORT', 'HOST', 'GRPC_PORT', 'SERVICE_ADMIN_TOKEN', 'DB_POOL_SIZE'];

/** Cleanup steps, run last-in first-out on success, error, signal or watchdog. */
const cleanups: Array<{ what: string; fn: () => Promise<void> }> = [];
function onCleanup(what: string, fn: () => Promise<void>): void {
  cleanups.push({ what, fn });
}
async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop()!;
    try {
      await step.fn();
    } catch (err) {
      console.error(`bench: cleanup "${step.what}" failed: ${(err as Error).message}`);
    }
  }
}

function log(msg: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function startPlinth(cfg: BenchConfig, env: Record<string, string>): Promise<ChildServer> {
  const server = await startNodeServer({
    name: 'plinth',
    script: cfg.serverScript,
    cwd: cfg.rootDir,
    host: cfg.host,
    env: {
      ...env,
      GRPC_PORT: String(await freePort(cfg.host)),
      SERVICE_ADMIN_TOKEN: cfg.adminToken,
      LOG_LEVEL: 'warn',
      // Same pool size as the baseline's (ignored by the server on PGlite).
      DB_POOL_SIZE: String(cfg.poolSize),
    },
    unsetEnv: SERVER_ENV_UNSET,
    startTimeoutMs: cfg.startTimeoutS * 1000,
    verbose: cfg.verbose,
  });
  onCleanup('stop plinth server', server.stop);
  log(`plinth server ready at ${server.url} (pid ${server.pid})`);
  return server;
}

async function prepare(cfg: BenchConfig, server: ChildServer): Promise<Fixture> {
  const project = await bootstrapProject(server.url, cfg.adminToken);
  log(`bootstrapped tenant ${project.tenantSlug}, project ${project.projectId}; seeding ${cfg.seedRows} rows`);
  const t0 = Date.now();
  const ids = await seedItems(server.url, project.headers, cfg.seedRows, SEED_CONCURRENCY);
  log(`seeded ${ids.length} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { ...project, ids };
}

async function runAll(cfg: BenchConfig, label: string, target: Target, durationS: number): Promise<WorkloadResult[]> {
  const out: WorkloadResult[] = [];
  for (const w of WORKLOADS) {
    log(`${label}: ${w} (${cfg.warmupS} s warm-up + ${durationS} s, ${cfg.connections} connections)`);
    const r = await runWorkload(w, target, { durationS, warmupS: cfg.warmupS, connections: cfg.connections });
    log(r.error !== undefined ? `${label}: ${w} FAILED: ${r.error}` : `${label}: ${w} ${r.reqPerSec.toFixed(0)} req/s`);
    out.push(r);
  }
  return out;
}

async function startBaseline(cfg: BenchConfig, databaseUrl: string, schema: string): Promise<ChildServer> {
  const baseline = await startNodeServer({
    name: 'baseline',
    script: cfg.baselineScript,
    cwd: cfg.rootDir,
    host: cfg.host,
    env: { DATABASE_URL: databaseUrl, BASELINE_SCHEMA: schema, PG_POOL_MAX: String(cfg.poolSize) },
    unsetEnv: SERVER_ENV_UNSET,
    startTimeoutMs: cfg.startTimeoutS * 1000,
    verbose: cfg.verbose,
  });
  onCleanup('stop baseline server', baseline.stop);
  log(`baseline ready at ${baseline.url} (pid ${baseline.pid}, pool ${cfg.poolSize})`);
  return baseline;
}

function combine(segments: BackendRun['segments'], target: TargetKind): WorkloadResult[] {
  const out: WorkloadResult[] = [];
  for (const w of WORKLOADS) {
    const parts = segments.filter((s) => s.target === target).flatMap((s) => s.results.filter((r) => r.workload === w));
    if (parts.length > 0) out.push(combineSegments(w, parts));
  }
  return out;
}

async function runPostgres(cfg: BenchConfig): Promise<BackendRun> {
  const run: BackendRun = { backend: 'postgres', seedRows: cfg.seedRows, plinth: [], baseline: [], segments: [], notes: [] };
  const db = await createScratchDatabase(cfg.adminDatabaseUrl);
  onCleanup(`drop database ${db.name}`, db.drop);
  log(`created database ${db.name}`);

  // Bootstrap and seed through the server; the baseline then reads the same table.
  let current: ChildServer | undefined = await startPlinth(cfg, { DATABASE_URL: db.url });
  let fixture: Fixture;
  let schema: string;
  try {
    fixture = await prepare(cfg, current);
    schema = projectSchema(fixture.projectId);
    const rows = await analyzeItems(db.url, schema);
    run.notes.push(`table ${schema}."Item" holds ${rows} rows at the start of every segment`);
  } catch (err) {
    run.error = `plinth/postgres bootstrap: ${errorText(err)}\n${current.logTail()}`;
    await current.stop();
    return run;
  }

  // Segments alternate plinth and baseline (ABBA), never both running at once. Between two
  // segments the process stops and the rows written by the create workload are removed.
  const order = segmentOrder(cfg.rounds);
  const durationS = Math.max(1, cfg.durationS / cfg.rounds);
  let removed = 0;
  try {
    for (const [i, kind] of order.entries()) {
      if (current === undefined) {
        current = kind === 'plinth' ? await startPlinth(cfg, { DATABASE_URL: db.url }) : await startBaseline(cfg, db.url, schema);
      }
      const label = `${kind === 'plinth' ? 'plinth/postgres' : 'baseline'} [segment ${i + 1}/${order.length}]`;
      try {
        const results = await runAll(cfg, label, { url: current.url, headers: fixture.headers, ids: fixture.ids }, durationS);
        run.segments.push({ target: kind, results });
      } finally {
        await current.stop();
        current = undefined;
      }
      removed += await deleteCreatedItems(db.url, schema);
      await analyzeItems(db.url, schema);
    }
    run.notes.push(
      `${order.length} segments (${order.join(', ')}), ${durationS} s each per workload; ` +
        `${removed} rows written by create workloads were removed between segments`,
    );
  } catch (err) {
    run.error = `postgres: ${errorText(err)}${current ? `\n${current.logTail()}` : ''}`;
  } finally {
    await current?.stop();
  }
  run.plinth = combine(run.segments, 'plinth');
  run.baseline = combine(run.segments, 'baseline');
  return run;
}

async function runPglite(cfg: BenchConfig): Promise<BackendRun> {
  const run: BackendRun = { backend: 'pglite', seedRows: cfg.seedRows, plinth: [], baseline: [], segments: [], notes: [] };
  const dataDir = await mkdtemp(join(tmpdir(), 'plinth-bench-pglite-'));
  onCleanup(`remove ${dataDir}`, () => rm(dataDir, { recursive: true, force: true }));
  const server = await startPlinth(cfg, { DATA_DIR: dataDir });
  try {
    const fixture = await prepare(cfg, server);
    const results = await runAll(cfg, 'plinth/pglite', { url: server.url, headers: fixture.headers, ids: fixture.ids }, cfg.durationS);
    run.segments.push({ target: 'plinth', results });
    run.plinth = results;
  } catch (err) {
    run.error = `plinth/pglite: ${errorText(err)}\n${server.logTail()}`;
  } finally {
    await server.stop();
  }
  return run;
}

async function main(): Promise<number> {
  const cfg = loadConfig();
  const startedAt = new Date();

  const abort = (why: string, code: number) => {
    console.error(`bench: ${why}; stopping children and cleaning up`);
    killAllChildrenNow();
    const hardExit = setTimeout(() => process.exit(code), 15_000);
    hardExit.unref();
    void cleanupAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => abort('interrupted (SIGINT)', 130));
  process.once('SIGTERM', () => abort('terminated (SIGTERM)', 143));
  const watchdog = setTimeout(() => abort(`run exceeded BENCH_MAX_MINUTES=${cfg.maxRunMinutes}`, 2), cfg.maxRunMinutes * 60_000);
  watchdog.unref();

  if (!existsSync(cfg.serverScript)) {
    console.error(`bench: ${cfg.serverScript} does not exist; build the server first (npm run build)`);
    return 1;
  }
  log(
    `backends ${cfg.backends.join(',')}; ${cfg.durationS} s per workload (postgres: over ${cfg.rounds} rounds) ` +
      `after ${cfg.warmupS} s warm-up; ` +
      `${cfg.connections} connections; ${cfg.seedRows} seed rows; baseline pool ${cfg.poolSize}`,
  );

  const runs: BackendRun[] = [];
  try {
    for (const backend of cfg.backends) {
      try {
        runs.push(backend === 'postgres' ? await runPostgres(cfg) : await runPglite(cfg));
      } catch (err) {
        runs.push({ backend, seedRows: cfg.seedRows, plinth: [], baseline: [], segments: [], notes: [], error: errorText(err) });
      } finally {
        // Stop this backend's server/baseline and drop its storage before the next one starts.
        await cleanupAll();
      }
    }
  } finally {
    await cleanupAll();
    clearTimeout(watchdog);
  }

  const baseline = runs.find((r) => r.backend === 'postgres')?.baseline ?? [];
  for (const run of runs) console.log(formatBackend(run, baseline));
  console.log(
    '\nratio = Plinth req/s / bare node:http+pg req/s, measured in this run on this machine; ' +
      'load generator, server and PostgreSQL share the same cores.',
  );
  await writeResults(cfg, runs, startedAt);
  log(`results written to ${cfg.resultsFile}`);
  const failed = runs.some((r) => r.error !== undefined || [...r.plinth, ...r.baseline].some((w) => w.error !== undefined));
  return failed ? 1 : 0;
}

// Exit explicitly: idle keep-alive sockets of the HTTP clients must not keep the run alive.
main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    killAllChildrenNow();
    await cleanupAll();
    process.exit(1);
  },
);
