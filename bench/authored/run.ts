/**
 * `npm run bench:authored`: the authored-code benchmark of issue 24, on PostgreSQL, as a granted
 * user, against REST W1 (read one order by id) measured by the same server in the same run:
 *   - throughput (wrk -c50): a no-op operation (`return input`) and one that reads one row
 *     through `ctx.db`, as ratios to W1 (target: no-op ≥ 0.5× W1);
 *   - warm latency (wrk -c1): p50 of each, and the invocation's overhead over W1
 *     (target ≤ 0.5 ms p50 for the read, which does W1's work plus the invocation);
 *   - cold: the first call after each publish (target ≤ 20 ms p99);
 *   - the CPU limit: an EdgeHandler spinning forever under its 50 ms limit, the time to its 504;
 *   - memory: server RSS once 1,000 distinct handlers across 100 projects have each run once
 *     (target ≤ 300 MB).
 * Throughput rounds alternate their order (ABBA); figures go to bench/results/authored.json and
 * docs/performance.md. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { intEnv } from '../config.js';
import { createScratchDatabase } from '../db.js';
import { call, expectStatus as expect } from '../http-call.js';
import { exitAfterMinutes, freePort, gitCommit, startNodeServer, type ChildServer } from '../server-process.js';
import { bootstrap, userToken, type Fixture } from '../hot-path/fixture.js';
import { ENTITY_PATH } from '../hot-path/order-model.js';
import { ensureWrk, runWrk, writeScript, type WrkResult } from '../hot-path/wrk.js';
import { BENCH_HANDLERS, declareHandler, publishBenchHandlers, putSource } from './handlers.js';

const here = dirname(fileURLToPath(import.meta.url));
const rootDir = resolve(here, '..', '..', '..');
const cfg = {
  rows: intEnv('BENCH_ROWS', 10_000, 1_000),
  durationS: intEnv('BENCH_DURATION_S', 8, 1),
  warmupS: intEnv('BENCH_WARMUP_S', 2, 0),
  rounds: intEnv('BENCH_ROUNDS', 3, 1),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  threads: intEnv('BENCH_THREADS', 2, 1),
  pool: intEnv('BENCH_PG_POOL', 10, 1),
  coldSamples: intEnv('BENCH_COLD_SAMPLES', 40, 1),
  spinSamples: intEnv('BENCH_SPIN_SAMPLES', 20, 1),
  rssProjects: intEnv('BENCH_RSS_PROJECTS', 100, 0),
  rssHandlersPerProject: intEnv('BENCH_RSS_HANDLERS', 10, 1),
  maxMinutes: intEnv('BENCH_MAX_MINUTES', 40, 1),
  adminDatabaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};
const HOST = '127.0.0.1';
const ADMIN_TOKEN = `bench-admin-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

type Workload = 'W1' | 'OP-noop' | 'OP-read';

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? 0;
};
const median = (xs: number[]): number => quantile(xs, 0.5);
const rssMb = (pid: number, field: 'VmRSS' | 'VmHWM'): number => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) / 1024;
};

function scripts(dir: string, f: Fixture, token: string): Record<Workload, string> {
  const headers = { Authorization: `Bearer ${token}`, 'X-Service-Tenant': f.tenantSlug, 'X-Service-Project': f.projectSlug, 'Content-Type': 'application/json' };
  const ids = f.ids.filter((_, i) => i % 10 === 0);
  return {
    W1: writeScript(dir, 'W1', { method: 'GET', paths: ids.map((id) => `/api/${ENTITY_PATH}/${id}`), headers }),
    'OP-noop': writeScript(dir, 'OP-noop', { method: 'POST', paths: ['/api/operations/noop'], bodies: ids.slice(0, 200).map((id) => JSON.stringify({ id })), headers }),
    'OP-read': writeScript(dir, 'OP-read', { method: 'POST', paths: ['/api/operations/readOne'], bodies: ids.map((id) => JSON.stringify({ id })), headers }),
  };
}

/** One call timed from the client, in ms. */
async function timed(url: string, headers: Record<string, string>, path: string, body: unknown, status: number): Promise<number> {
  const t0 = performance.now();
  const a = await call('POST', `${url}${path}`, headers, body);
  const ms = performance.now() - t0;
  expect(path, a, status);
  return ms;
}

/** The first call after each of `samples` publishes of a changed no-op handler. */
async function coldStarts(url: string, admin: Record<string, string>, user: Record<string, string>, samples: number): Promise<number[]> {
  const out: number[] = [];
  const h = BENCH_HANDLERS.noop;
  for (let i = 0; i < samples; i++) {
    await putSource(url, admin, h.path, `${h.source}// publish ${i}\n`);
    await declareHandler(url, admin, 'noop', h.surface, h.path, { type: 'object' }, true);
    out.push(await timed(url, user, '/api/operations/noop', { cold: i }, 200));
  }
  return out;
}

/** `projects` projects with `perProject` distinct handlers each, every one invoked once; the server's RSS after. */
async function manyHandlers(url: string, f: Fixture, projects: number, perProject: number): Promise<{ rssMb: number; handlers: number; publishS: number }> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const t0 = Date.now();
  let handlers = 0;
  for (let p = 0; p < projects; p++) {
    const slug = `rss-${p}`;
    expect(`project ${slug}`, await call('POST', `${url}/api/projects/create`, admin, { tenant: f.tenantSlug, slug, name: slug }), 201);
    const headers = { ...admin, 'x-service-tenant': f.tenantSlug, 'x-service-project': slug };
    for (let h = 0; h < perProject; h++) {
      const name = `h${h}`;
      const path = `ops/${name}.js`;
      await putSource(url, headers, path, `const salt = ${p * 1000 + h};\nexport default async function (ctx, input) { return { salt, input }; }\n`);
      await declareHandler(url, headers, name, 'CoreHandler', path, { type: 'object' });
      await timed(url, headers, `/api/operations/${name}`, {}, 200);
      handlers++;
    }
    if ((p + 1) % 10 === 0) log(`  ${p + 1}/${projects} projects, ${handlers} handlers published and run`);
  }
  return { rssMb: 0, handlers, publishS: (Date.now() - t0) / 1000 };
}

async function main(): Promise<number> {
  ensureWrk();
  exitAfterMinutes('bench:authored', cfg.maxMinutes);
  const commit = gitCommit(rootDir);
  log(`authored-code bench: ${cfg.rows} rows; wrk -t${cfg.threads} -c${cfg.connections}, ${cfg.warmupS} s warm-up + ${cfg.durationS} s, ${cfg.rounds} rounds; pool ${cfg.pool}; commit ${commit}`);
  const db = await createScratchDatabase(cfg.adminDatabaseUrl);
  const tmp = mkdtempSync(join(tmpdir(), 'plinth-authored-'));
  let server: ChildServer | undefined;
  try {
    server = await startNodeServer({
      name: 'plinth', script: join(rootDir, 'dist', 'main.js'), cwd: rootDir, host: HOST,
      env: { DATABASE_URL: db.url, SERVICE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', DB_POOL_SIZE: String(cfg.pool), GRPC_PORT: String(await freePort(HOST)) },
      unsetEnv: ['DATABASE_URL', 'DATA_DIR', 'NATS_URL', 'PORT', 'HOST', 'GRPC_PORT', 'SERVICE_ADMIN_TOKEN', 'DB_POOL_SIZE'], startTimeoutMs: 90_000, verbose: false,
    });
    const f = await bootstrap(server.url, ADMIN_TOKEN, cfg.rows);
    const adminScoped = { authorization: `Bearer ${ADMIN_TOKEN}`, ...f.scopeHeaders };
    await publishBenchHandlers(server.url, adminScoped, f.projectId, f.userSubjectId);
    const token = await userToken(server.url, f);
    const user = { authorization: `Bearer ${token}`, ...f.scopeHeaders };
    expect('probe noop', await call('POST', `${server.url}/api/operations/noop`, user, { id: f.ids[0] }), 200);
    const probe = await call('POST', `${server.url}/api/operations/readOne`, user, { id: f.ids[0] });
    expect('probe readOne', probe, 200);
    if ((probe.body as { data?: { id?: string } }).data?.id !== f.ids[0]) throw new Error(`readOne answered ${probe.text.slice(0, 300)}`);
    const s = scripts(tmp, f, token);

    const throughput: Record<Workload, WrkResult[]> = { W1: [], 'OP-noop': [], 'OP-read': [] };
    const order: Workload[] = ['W1', 'OP-noop', 'OP-read'];
    for (let round = 0; round < cfg.rounds; round++) {
      for (const w of round % 2 === 0 ? order : [...order].reverse()) {
        const opts = { threads: cfg.threads, connections: cfg.connections };
        if (cfg.warmupS > 0) await runWrk(server.url, s[w], { ...opts, durationS: cfg.warmupS });
        const r = await runWrk(server.url, s[w], { ...opts, durationS: cfg.durationS });
        throughput[w].push(r);
        log(`round ${round + 1} ${w}: ${r.reqPerSec.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(1)} ms${r.errors > 0 ? `, ${r.errors} errors` : ''}`);
      }
    }
    const latency: Record<Workload, WrkResult[]> = { W1: [], 'OP-noop': [], 'OP-read': [] };
    for (let round = 0; round < cfg.rounds; round++) {
      for (const w of round % 2 === 0 ? order : [...order].reverse()) {
        const r = await runWrk(server.url, s[w], { threads: 1, connections: 1, durationS: Math.max(3, Math.round(cfg.durationS / 2)), latency: true });
        latency[w].push(r);
        log(`round ${round + 1} ${w} (1 connection): p50 ${r.p50Ms.toFixed(3)} ms, p99 ${r.p99Ms.toFixed(2)} ms`);
      }
    }
    log(`cold: ${cfg.coldSamples} publishes, each followed by one call`);
    const cold = await coldStarts(server.url, adminScoped, user, cfg.coldSamples);
    const spin: number[] = [];
    for (let i = 0; i < cfg.spinSamples; i++) spin.push(await timed(server.url, user, '/api/operations/spin', {}, 504));
    log(`many handlers: ${cfg.rssProjects} projects × ${cfg.rssHandlersPerProject}`);
    const rssBefore = rssMb(server.pid, 'VmRSS');
    const many = cfg.rssProjects === 0 ? null : await manyHandlers(server.url, f, cfg.rssProjects, cfg.rssHandlersPerProject);
    if (many !== null) many.rssMb = rssMb(server.pid, 'VmRSS');

    const rps = (w: Workload): number => median(throughput[w].map((r) => r.reqPerSec));
    const p50 = (w: Workload): number => median(latency[w].map((r) => r.p50Ms));
    const result = {
      at: new Date().toISOString(), commit, settings: cfg,
      throughput: { W1: rps('W1'), noop: rps('OP-noop'), read: rps('OP-read'), noopRatio: rps('OP-noop') / rps('W1'), readRatio: rps('OP-read') / rps('W1') },
      latencyP50Ms: { W1: p50('W1'), noop: p50('OP-noop'), read: p50('OP-read'), readOverW1: p50('OP-read') - p50('W1'), noopOverW1: p50('OP-noop') - p50('W1') },
      coldMs: { p50: quantile(cold, 0.5), p99: quantile(cold, 0.99), max: Math.max(...cold) },
      spinTo504Ms: { p50: quantile(spin, 0.5), p99: quantile(spin, 0.99) },
      memory: { rssBeforeMb: rssBefore, ...(many ?? {}), peakRssMb: rssMb(server.pid, 'VmHWM') },
      rounds: { throughput, latency },
    };
    const r = result;
    console.log([
      '',
      `| measure | value | target |`,
      `|---|---|---|`,
      `| W1 req/s (median of ${cfg.rounds}) | ${r.throughput.W1.toFixed(0)} | |`,
      `| no-op operation req/s, ratio to W1 | ${r.throughput.noop.toFixed(0)}, ${r.throughput.noopRatio.toFixed(2)}× | ≥ 0.5× |`,
      `| one-row-read operation req/s, ratio to W1 | ${r.throughput.read.toFixed(0)}, ${r.throughput.readRatio.toFixed(2)}× | |`,
      `| p50, 1 connection: W1 / no-op / read | ${r.latencyP50Ms.W1.toFixed(3)} / ${r.latencyP50Ms.noop.toFixed(3)} / ${r.latencyP50Ms.read.toFixed(3)} ms | |`,
      `| warm overhead p50 (read op − W1) | ${r.latencyP50Ms.readOverW1.toFixed(3)} ms | ≤ 0.5 ms |`,
      `| cold call after publish p50 / p99 | ${r.coldMs.p50.toFixed(1)} / ${r.coldMs.p99.toFixed(1)} ms | p99 ≤ 20 ms |`,
      `| spin under 50 ms CPU: time to 504 p50 / p99 | ${r.spinTo504Ms.p50.toFixed(1)} / ${r.spinTo504Ms.p99.toFixed(1)} ms | CPU ≤ 60 ms |`,
      many === null ? '' : `| RSS with ${many.handlers} handlers run (${cfg.rssProjects} projects) | ${many.rssMb.toFixed(0)} MB (before: ${rssBefore.toFixed(0)} MB) | ≤ 300 MB |`,
    ].join('\n'));
    const out = join(rootDir, 'bench', 'results', 'authored.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    log(`results written to ${out}`);
    return 0;
  } finally {
    await server?.stop().catch(() => {});
    await db.drop().catch((e: Error) => console.error(`bench: drop ${db.name}: ${e.message}`));
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then((code) => process.exit(code), (err) => {
  console.error(err);
  process.exit(1);
});
