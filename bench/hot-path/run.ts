/**
 * `npm run bench`: the hot-path benchmark of issue 9, measured with wrk (a native load
 * generator) so the numbers say something about the servers rather than the client.
 *
 * One PostgreSQL database, one `Order` table of BENCH_ROWS rows, served in turn by
 *   - the bare baseline (node:http + pg, plain statements), and the same with prepared statements,
 *   - Plinth as a registered user holding `entity:Order:read|insert` (W1, W2, W3),
 *   - Plinth as the platform admin (W1),
 *   - Plinth as a user whose read grant has a row filter and a field mask (W1P, W2P: W1 and W2
 *     again; skipped with a message on a build that refuses such a grant),
 *   - Plinth as the same granted user with hard read and write quotas on the project (W1, W3:
 *     issue 11's quota cost, target ≥ 0.95× of the same workloads without quotas),
 * never two at once, in an order that alternates per round (ABBA), warm-up discarded,
 * the median of BENCH_ROUNDS rounds per workload, peak RSS of every server.
 * See bench/README.md and docs/performance.md.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { intEnv } from '../config.js';
import { createScratchDatabase } from '../db.js';
import { exitAfterMinutes, freePort, gitCommit, killAllChildrenNow, startNodeServer, type ChildServer } from '../server-process.js';
import { bootstrap, resetTable, spreadCreatedAt, userToken, type Fixture } from './fixture.js';
import { CREATED_PREFIX, projectSchema } from './order-model.js';
import { formatReport, type Measured, type TargetName, type WorkloadName } from './report.js';
import { ensureWrk, runWrk, writeScript } from './wrk.js';
import { probeWorkloads as probe, workloadScripts as scripts } from './workloads.js';
import { cpuAround, type CpuPerRequest } from './cpu-per-request.js';
import { probePolicy } from './policy.js';
import { graphqlScripts, probeGraphQL } from './graphql.js';
import { probeShipments, seedShipments, shipmentScripts, spreadShipments } from './shipments.js';
import { createBenchQuotas, dropBenchQuotas, probeQuota } from './quota.js';

const here = dirname(fileURLToPath(import.meta.url));
const rootDir = resolve(here, '..', '..', '..');
const cfg = {
  rows: intEnv('BENCH_ROWS', 100_000, 1_000),
  durationS: intEnv('BENCH_DURATION_S', 12, 1),
  warmupS: intEnv('BENCH_WARMUP_S', 3, 0),
  rounds: intEnv('BENCH_ROUNDS', 3, 1),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  threads: intEnv('BENCH_THREADS', 2, 1),
  pool: intEnv('BENCH_PG_POOL', 10, 1),
  maxMinutes: intEnv('BENCH_MAX_MINUTES', 40, 1),
  adminDatabaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  cpuProfileDir: process.env.BENCH_CPU_PROF_DIR ?? null,
  /** Another build's entry point (e.g. a worktree of an older commit): measured as a granted user in the same rounds, for before/after ratios. */
  previousScript: process.env.BENCH_PREVIOUS_SERVER ?? null,
  /** Comma-separated subsets, for profiling one thing: BENCH_TARGETS=plinth BENCH_WORKLOADS=W3. */
  only: { targets: listEnv('BENCH_TARGETS'), workloads: listEnv('BENCH_WORKLOADS') },
  verbose: process.env.BENCH_VERBOSE === '1',
};
/** Whether any of these workloads is selected (all are unless BENCH_WORKLOADS narrows them). */
function wanted(...workloads: WorkloadName[]): boolean {
  return cfg.only.workloads === null || workloads.some((w) => cfg.only.workloads!.has(w));
}
function listEnv(name: string): Set<string> | null {
  const raw = process.env[name];
  return raw === undefined || raw.trim() === '' ? null : new Set(raw.split(',').map((x) => x.trim()));
}

const SERVER_ENV_UNSET = ['DATABASE_URL', 'DATA_DIR', 'NATS_URL', 'PORT', 'HOST', 'GRPC_PORT', 'SERVICE_ADMIN_TOKEN', 'DB_POOL_SIZE'];
const HOST = '127.0.0.1';
const ADMIN_TOKEN = `bench-admin-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
/** Shipments of the nested to-one workloads (W4, G4), each of an order spread over the table. */
const SHIPMENT_ROWS = 20_000;

const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** Peak resident set size of a live process, from the kernel's high-water mark. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) / 1024;
}

function startPlinth(databaseUrl: string, grpcPort: number, script = join(rootDir, 'dist', 'main.js')): Promise<ChildServer> {
  return startNodeServer({
    name: 'plinth', script, cwd: rootDir, host: HOST,
    env: { DATABASE_URL: databaseUrl, SERVICE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', DB_POOL_SIZE: String(cfg.pool), GRPC_PORT: String(grpcPort) },
    unsetEnv: SERVER_ENV_UNSET, startTimeoutMs: 90_000, verbose: cfg.verbose,
    ...(cfg.cpuProfileDir === null ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${cfg.cpuProfileDir}`] }),
  });
}

type BaselineKind = 'bare' | 'bare-prepared' | 'bare-uws';

/** node:http with plain or prepared statements, or uWebSockets.js with prepared statements (the fair baseline). */
function startBaseline(databaseUrl: string, schema: string, kind: BaselineKind): Promise<ChildServer> {
  return startNodeServer({
    name: kind, script: join(here, kind === 'bare-uws' ? 'baseline-orders-uws.js' : 'baseline-orders.js'), cwd: rootDir, host: HOST,
    env: { DATABASE_URL: databaseUrl, BASELINE_SCHEMA: schema, PG_POOL_MAX: String(cfg.pool), BASELINE_PREPARED: kind === 'bare' ? '0' : '1' },
    unsetEnv: SERVER_ENV_UNSET, startTimeoutMs: 30_000, verbose: cfg.verbose,
  });
}

/** A warm-up, then the measured run with the CPU it cost the server and the database per request. */
async function measure(server: ChildServer, databaseUrl: string, script: string): Promise<{ reqPerSec: number; p50Ms: number; p99Ms: number; errors: number; requests: number } & CpuPerRequest> {
  const opts = { threads: cfg.threads, connections: cfg.connections };
  if (cfg.warmupS > 0) await runWrk(server.url, script, { ...opts, durationS: cfg.warmupS });
  return cpuAround(server.pid, databaseUrl, () => runWrk(server.url, script, { ...opts, durationS: cfg.durationS }));
}

async function main(): Promise<number> {
  ensureWrk();
  exitAfterMinutes('bench', cfg.maxMinutes);
  const commit = gitCommit(rootDir);
  log(`${cfg.rows} rows; wrk -t${cfg.threads} -c${cfg.connections}, ${cfg.warmupS} s warm-up + ${cfg.durationS} s, ${cfg.rounds} rounds; pool ${cfg.pool}; commit ${commit}`);

  const db = await createScratchDatabase(cfg.adminDatabaseUrl);
  const tmp = mkdtempSync(join(tmpdir(), 'plinth-wrk-'));
  const measured: Measured[] = [];
  const peakRss: Record<string, number> = {};
  const notes: string[] = [];
  let current: ChildServer | undefined;
  try {
    current = await startPlinth(db.url, await freePort(HOST));
    log(`seeding ${cfg.rows} orders through the batch route`);
    const t0 = Date.now();
    const f = await bootstrap(current.url, ADMIN_TOKEN, cfg.rows);
    const schema = projectSchema(f.projectId);
    const shipments = wanted('W4', 'G4');
    if (shipments) await seedShipments(current.url, f, f.userSubjectId, SHIPMENT_ROWS);
    await current.stop();
    current = undefined;
    await spreadCreatedAt(db.url, schema);
    if (shipments) await spreadShipments(db.url, schema);
    log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (f.policySkipReason !== null && wanted('W1P', 'W2P')) {
      log(f.policySkipReason);
      notes.push(f.policySkipReason);
    }

    const kinds: Array<'plinth' | 'plinth-quota' | 'plinth-previous' | BaselineKind> = ['plinth', 'plinth-quota', 'bare', 'bare-prepared', 'bare-uws'];
    if (!wanted('W1', 'W3')) kinds.splice(kinds.indexOf('plinth-quota'), 1);
    if (cfg.previousScript !== null) kinds.splice(1, 0, 'plinth-previous');
    if (cfg.only.targets !== null) for (let i = kinds.length - 1; i >= 0; i--) if (!cfg.only.targets.has(kinds[i]!)) kinds.splice(i, 1);
    for (let round = 0; round < cfg.rounds; round++) {
      const order = round % 2 === 0 ? kinds : [...kinds].reverse();
      for (const kind of order) {
        current = kind === 'plinth' || kind === 'plinth-quota' ? await startPlinth(db.url, await freePort(HOST))
          : kind === 'plinth-previous' ? await startPlinth(db.url, await freePort(HOST), resolve(cfg.previousScript!))
          : await startBaseline(db.url, schema, kind);
        const runs: Array<{ target: TargetName; workload: WorkloadName; script: string }> = [];
        let quotaIds: string[] = [];
        if (kind === 'plinth') {
          const token = await userToken(current.url, f);
          await probe(current.url, f, token);
          const user = scripts(tmp, f, token, `user-r${round}`);
          const admin = scripts(tmp, f, ADMIN_TOKEN, `admin-r${round}`);
          runs.push({ target: 'plinth-user', workload: 'W1', script: user.W1 }, { target: 'plinth-user', workload: 'W2', script: user.W2 },
            { target: 'plinth-user', workload: 'W3', script: user.W3 }, { target: 'plinth-admin', workload: 'W1', script: admin.W1 });
          if (wanted('G1', 'G2', 'G3')) {
            // The same reads and creates over POST /graphql, as the same user (issue 12).
            await probeGraphQL(current.url, f, token);
            const g = graphqlScripts(f, { Authorization: `Bearer ${token}`, 'X-Service-Tenant': f.tenantSlug, 'X-Service-Project': f.projectSlug }, f.ids.filter((_, i) => i % 50 === 0));
            for (const w of ['G1', 'G2', 'G3'] as const) runs.push({ target: 'plinth-user', workload: w, script: writeScript(tmp, `graphql-r${round}-${w}`, g[w]) });
          }
          if (shipments) {
            // A list with a nested to-one relation, over REST (include=order) and GraphQL (issue 12).
            await probeShipments(current.url, f, token);
            const s = shipmentScripts({ Authorization: `Bearer ${token}`, 'X-Service-Tenant': f.tenantSlug, 'X-Service-Project': f.projectSlug });
            for (const w of ['W4', 'G4'] as const) runs.push({ target: 'plinth-user', workload: w, script: writeScript(tmp, `shipments-r${round}-${w}`, s[w]) });
          }
          if (f.policyUser !== null && wanted('W1P', 'W2P')) {
            // The same reads as W1/W2, as the user whose read grant has a row filter and a field mask.
            const policyToken = await userToken(current.url, f, f.policyUser);
            await probePolicy(current.url, f.scopeHeaders, policyToken, f.ids[0]!, f.policyUser.subjectId);
            const policy = scripts(tmp, f, policyToken, `policy-r${round}`);
            runs.push({ target: 'plinth-user', workload: 'W1P', script: policy.W1 }, { target: 'plinth-user', workload: 'W2P', script: policy.W2 });
          }
        } else if (kind === 'plinth-quota') {
          quotaIds = await createBenchQuotas(current.url, f);
          const token = await userToken(current.url, f);
          await probe(current.url, f, token);
          await probeQuota(current.url, f);
          const user = scripts(tmp, f, token, `quota-r${round}`);
          runs.push({ target: 'plinth-quota', workload: 'W1', script: user.W1 }, { target: 'plinth-quota', workload: 'W3', script: user.W3 });
        } else if (kind === 'plinth-previous') {
          const token = await userToken(current.url, f);
          await probe(current.url, f, token);
          const user = scripts(tmp, f, token, `previous-r${round}`);
          runs.push({ target: 'plinth-previous', workload: 'W1', script: user.W1 }, { target: 'plinth-previous', workload: 'W2', script: user.W2 },
            { target: 'plinth-previous', workload: 'W3', script: user.W3 });
        } else {
          await probe(current.url, f, null);
          const s = scripts(tmp, f, null, `${kind}-r${round}`);
          runs.push({ target: kind, workload: 'W1', script: s.W1 }, { target: kind, workload: 'W2', script: s.W2 }, { target: kind, workload: 'W3', script: s.W3 });
        }
        for (const r of runs) {
          if (cfg.only.workloads !== null && !cfg.only.workloads.has(r.workload)) continue;
          const m = await measure(current, db.url, r.script);
          log(`round ${round + 1} ${r.target} ${r.workload}: ${m.reqPerSec.toFixed(0)} req/s, p99 ${m.p99Ms.toFixed(1)} ms, CPU/request ${m.serverCpuUs.toFixed(0)} µs server + ${m.dbCpuUs.toFixed(0)} µs database${m.errors > 0 ? `, ${m.errors} errors` : ''}`);
          measured.push({ round, ...r, ...m });
        }
        if (quotaIds.length > 0) await dropBenchQuotas(current.url, f, quotaIds);
        const rss = peakRssMb(current.pid);
        const key = kind;
        peakRss[key] = Math.max(peakRss[key] ?? 0, rss);
        await current.stop();
        current = undefined;
        await resetTable(db.url, schema, CREATED_PREFIX);
      }
    }
  } finally {
    await current?.stop().catch(() => {});
    await db.drop().catch((e: Error) => console.error(`bench: drop ${db.name}: ${e.message}`));
    rmSync(tmp, { recursive: true, force: true });
  }

  const report = formatReport(measured, peakRss, { ...cfg, commit }, notes);
  console.log(report.text);
  const out = join(rootDir, 'bench', 'results', 'hot-path.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), commit, settings: cfg, peakRssMb: peakRss, medians: report.medians, measured }, null, 2) + '\n');
  log(`results written to ${out}`);
  const failed = measured.some((m) => m.errors > m.requests * 0.01);
  return failed ? 1 : 0;
}


main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    killAllChildrenNow();
    process.exit(1);
  },
);
