/**
 * `npm run bench:scheduling`: the scheduling benchmark of issue 25, on PostgreSQL, one server:
 *   - throughput: manual triggers of a no-op ScheduledJob back to back (wrk -c50 on the trigger
 *     route), every run with its attempt recorded; runs/s = runs finished / time from the
 *     first trigger until the queue drained (target ≥ 2,000 runs/s);
 *   - trigger-to-start: one trigger at a time; the run's `created_at` to its first attempt's
 *     `started_at`, both the database's clock (target ≤ 5 ms p50; graphile-worker publishes
 *     ~4 ms add-to-start);
 *   - lateness: a 1 s interval trigger; `scheduledFor` to its attempt's start, on an idle node
 *     and while W1 (a granted user reading one order by id) runs (target ≤ 1 s p99 both);
 *   - scan cost: W1 with and without 10,000 active definitions on one-minute crons, ABBA
 *     rounds long enough to cross minute boundaries (target: W1 slowed ≤ 5 %).
 * Figures go to bench/results/scheduling.json and docs/performance.md. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { intEnv } from '../config.js';
import { createScratchDatabase } from '../db.js';
import { call, expectStatus as expect } from '../http-call.js';
import { exitAfterMinutes, freePort, gitCommit, startNodeServer, type ChildServer } from '../server-process.js';
import { bootstrap, userToken } from '../hot-path/fixture.js';
import { ENTITY_PATH } from '../hot-path/order-model.js';
import { ensureWrk, runWrk, writeScript, type WrkResult } from '../hot-path/wrk.js';
import { putSource } from '../authored/handlers.js';

const here = dirname(fileURLToPath(import.meta.url));
const rootDir = resolve(here, '..', '..', '..');
const cfg = {
  rows: intEnv('BENCH_ROWS', 10_000, 1_000),
  durationS: intEnv('BENCH_DURATION_S', 8, 1),
  rounds: intEnv('BENCH_ROUNDS', 2, 1),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  threads: intEnv('BENCH_THREADS', 2, 1),
  pool: intEnv('BENCH_PG_POOL', 10, 1),
  startSamples: intEnv('BENCH_START_SAMPLES', 300, 10),
  latenessS: intEnv('BENCH_LATENESS_S', 20, 5),
  cronDefinitions: intEnv('BENCH_CRON_DEFINITIONS', 10_000, 0),
  scanRoundS: intEnv('BENCH_SCAN_ROUND_S', 30, 5),
  maxMinutes: intEnv('BENCH_MAX_MINUTES', 40, 1),
  adminDatabaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};
const HOST = '127.0.0.1';
const ADMIN_TOKEN = `bench-admin-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? 0;
};
const median = (xs: number[]): number => quantile(xs, 0.5);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const NOOP = { path: 'jobs/noop.js', source: 'export default async function () { return null; }\n' };

/** Declares the no-op ScheduledJob and one definition of it; answers the definition's id. */
async function noopDefinition(url: string, admin: Record<string, string>, name: string, overlap: string): Promise<string> {
  const a = await call('POST', `${url}/api/scheduling/taskdefinition`, admin, { name, handler: 'noop', overlap, retry: { maxAttempts: 1, backoffSeconds: 1, maxBackoffSeconds: 1 } });
  expect(`definition ${name}`, a, 201);
  return (a.body as { data: { id: string } }).data.id;
}

/** Runs of a definition not yet finished. */
async function pending(db: pg.Client, definitionId: string): Promise<number> {
  const r = await db.query<{ n: string }>(`SELECT count(*) AS n FROM plinth.task_runs WHERE definition_id = $1 AND state IN ('queued', 'running')`, [definitionId]);
  return Number(r.rows[0]!.n);
}

/** Trigger-to-start (or scheduled-to-start) of a definition's runs, in ms, from the database's own clock. */
async function startDelays(db: pg.Client, definitionId: string, from: 'created_at' | 'scheduled_for'): Promise<number[]> {
  const r = await db.query<{ ms: number }>(
    `SELECT extract(epoch FROM (a.started_at - r.${from})) * 1000 AS ms FROM plinth.task_runs r JOIN plinth.task_attempts a ON a.run_id = r.id AND a.number = 1
     WHERE r.definition_id = $1 ORDER BY r.seq`, [definitionId]);
  return r.rows.map((x) => Number(x.ms));
}

async function throughput(url: string, db: pg.Client, admin: Record<string, string>, tmp: string, definitionId: string): Promise<{ runs: number; seconds: number; runsPerSec: number; triggersPerSec: number; attempts: number }> {
  const script = writeScript(tmp, 'trigger', { method: 'POST', paths: [`/api/scheduling/taskrun/${definitionId}/trigger`], bodies: ['{}'], headers: { ...admin, 'Content-Type': 'application/json' } });
  const t0 = Date.now();
  const w = await runWrk(url, script, { threads: cfg.threads, connections: cfg.connections, durationS: cfg.durationS });
  while (await pending(db, definitionId) > 0) await sleep(20);
  const seconds = (Date.now() - t0) / 1000;
  const counts = await db.query<{ runs: string; ok: string; attempts: string }>(
    `SELECT count(*) AS runs, count(*) FILTER (WHERE state = 'succeeded') AS ok, (SELECT count(*) FROM plinth.task_attempts a JOIN plinth.task_runs r ON r.id = a.run_id WHERE r.definition_id = $1) AS attempts
     FROM plinth.task_runs WHERE definition_id = $1`, [definitionId]);
  const c = counts.rows[0]!;
  if (Number(c.ok) !== Number(c.runs)) throw new Error(`${Number(c.runs) - Number(c.ok)} of ${c.runs} runs did not succeed`);
  return { runs: Number(c.runs), seconds, runsPerSec: Number(c.runs) / seconds, triggersPerSec: w.reqPerSec, attempts: Number(c.attempts) };
}

async function triggerToStart(url: string, db: pg.Client, admin: Record<string, string>, definitionId: string): Promise<number[]> {
  for (let i = 0; i < cfg.startSamples; i++) {
    expect('trigger', await call('POST', `${url}/api/scheduling/taskrun/${definitionId}/trigger`, admin, {}), 202);
    while (await pending(db, definitionId) > 0) await sleep(2);
  }
  return startDelays(db, definitionId, 'created_at');
}

/** A 1 s interval trigger for `seconds`, optionally while `load` runs; scheduledFor-to-start of each fire. */
async function lateness(url: string, db: pg.Client, admin: Record<string, string>, name: string, load?: () => Promise<WrkResult>): Promise<{ ms: number[]; w1?: WrkResult }> {
  const id = await noopDefinition(url, admin, name, 'allow');
  expect('interval trigger', await call('POST', `${url}/api/scheduling/taskdefinition/${id}/triggers`, admin, { kind: 'interval', intervalSeconds: 1 }), 201);
  const w1 = load === undefined ? (await sleep(cfg.latenessS * 1000), undefined) : await load();
  expect('pause', await call('POST', `${url}/api/scheduling/taskdefinition/${id}/pause`, admin, {}), 200);
  while (await pending(db, id) > 0) await sleep(20);
  const ms = await startDelays(db, id, 'scheduled_for');
  return w1 === undefined ? { ms } : { ms, w1 };
}

async function createCronDefinitions(url: string, admin: Record<string, string>, n: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const id = await noopDefinition(url, admin, `cron${i}`, 'skip');
      expect('cron trigger', await call('POST', `${url}/api/scheduling/taskdefinition/${id}/triggers`, admin, { kind: 'cron', cron: '* * * * *' }), 201);
      if ((i + 1) % 1000 === 0) log(`  ${i + 1}/${n} cron definitions`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function main(): Promise<number> {
  ensureWrk();
  exitAfterMinutes('bench:scheduling', cfg.maxMinutes);
  const commit = gitCommit(rootDir);
  log(`scheduling bench: wrk -t${cfg.threads} -c${cfg.connections} ${cfg.durationS} s; pool ${cfg.pool}; commit ${commit}`);
  const scratch = await createScratchDatabase(cfg.adminDatabaseUrl);
  const tmp = mkdtempSync(join(tmpdir(), 'plinth-scheduling-'));
  const db = new pg.Client({ connectionString: scratch.url });
  let server: ChildServer | undefined;
  try {
    server = await startNodeServer({
      name: 'plinth', script: join(rootDir, 'dist', 'main.js'), cwd: rootDir, host: HOST,
      env: { DATABASE_URL: scratch.url, SERVICE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', DB_POOL_SIZE: String(cfg.pool), GRPC_PORT: String(await freePort(HOST)) },
      unsetEnv: ['DATABASE_URL', 'DATA_DIR', 'NATS_URL', 'PORT', 'HOST', 'GRPC_PORT', 'SERVICE_ADMIN_TOKEN', 'DB_POOL_SIZE'], startTimeoutMs: 90_000, verbose: false,
    });
    await db.connect();
    const url = server.url;
    const f = await bootstrap(url, ADMIN_TOKEN, cfg.rows);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, ...f.scopeHeaders };
    await putSource(url, admin, NOOP.path, NOOP.source);
    expect('declare noop', await call('POST', `${url}/api/Schema/handlers`, admin, { name: 'noop', surface: 'ScheduledJob', source: NOOP.path }), 201);
    const token = await userToken(url, f);
    const w1Script = writeScript(tmp, 'W1', { method: 'GET', paths: f.ids.filter((_, i) => i % 10 === 0).map((id) => `/api/${ENTITY_PATH}/${id}`), headers: { Authorization: `Bearer ${token}`, ...f.scopeHeaders } });
    const w1 = (durationS: number): Promise<WrkResult> => runWrk(url, w1Script, { threads: cfg.threads, connections: cfg.connections, durationS });

    log('throughput: manual triggers of a no-op job');
    const tp = [];
    for (let round = 0; round < cfg.rounds; round++) {
      const r = await throughput(url, db, admin, tmp, await noopDefinition(url, admin, `burst${round}`, 'allow'));
      tp.push(r);
      log(`round ${round + 1}: ${r.runs} runs (${r.attempts} attempts) in ${r.seconds.toFixed(1)} s: ${r.runsPerSec.toFixed(0)} runs/s; triggers accepted ${r.triggersPerSec.toFixed(0)}/s`);
    }
    log(`trigger-to-start: ${cfg.startSamples} triggers, one at a time`);
    const starts = await triggerToStart(url, db, admin, await noopDefinition(url, admin, 'oneByOne', 'allow'));
    log(`  p50 ${quantile(starts, 0.5).toFixed(2)} ms, p99 ${quantile(starts, 0.99).toFixed(2)} ms`);
    log(`lateness: a 1 s interval for ${cfg.latenessS} s, idle, then under W1`);
    const idle = await lateness(url, db, admin, 'intervalIdle');
    const loaded = await lateness(url, db, admin, 'intervalLoaded', () => w1(cfg.latenessS));
    log(`  idle p50 ${quantile(idle.ms, 0.5).toFixed(1)} / p99 ${quantile(idle.ms, 0.99).toFixed(1)} ms; under W1 p50 ${quantile(loaded.ms, 0.5).toFixed(1)} / p99 ${quantile(loaded.ms, 0.99).toFixed(1)} ms`);

    const scan: { without: number[]; with: number[] } = { without: [], with: [] };
    if (cfg.cronDefinitions > 0) {
      for (let round = 0; round < cfg.rounds; round++) scan.without.push((await w1(cfg.scanRoundS)).reqPerSec);
      log(`scan cost: ${cfg.cronDefinitions} definitions on one-minute crons`);
      await createCronDefinitions(url, admin, cfg.cronDefinitions);
      for (let round = 0; round < cfg.rounds; round++) scan.with.push((await w1(cfg.scanRoundS)).reqPerSec);
      log(`  W1 without ${scan.without.map((x) => x.toFixed(0)).join(', ')} req/s; with ${scan.with.map((x) => x.toFixed(0)).join(', ')} req/s`);
    }
    const fired = await db.query<{ runs: string; late: number | null }>(
      `SELECT count(*) AS runs, max(extract(epoch FROM (a.started_at - r.scheduled_for)) * 1000) AS late FROM plinth.task_runs r JOIN plinth.task_attempts a ON a.run_id = r.id AND a.number = 1
       JOIN plinth.task_definitions d ON d.id = r.definition_id WHERE d.name LIKE 'cron%'`);

    const result = {
      at: new Date().toISOString(), commit, settings: cfg,
      throughput: { runsPerSec: median(tp.map((r) => r.runsPerSec)), rounds: tp },
      triggerToStartMs: { p50: quantile(starts, 0.5), p99: quantile(starts, 0.99), samples: starts.length },
      latenessMs: {
        idle: { p50: quantile(idle.ms, 0.5), p99: quantile(idle.ms, 0.99), fires: idle.ms.length },
        underW1: { p50: quantile(loaded.ms, 0.5), p99: quantile(loaded.ms, 0.99), fires: loaded.ms.length, w1ReqPerSec: loaded.w1?.reqPerSec ?? 0 },
      },
      scan: {
        definitions: cfg.cronDefinitions, w1Without: median(scan.without), w1With: median(scan.with),
        slowdown: scan.with.length === 0 ? 0 : 1 - median(scan.with) / median(scan.without),
        cronRuns: Number(fired.rows[0]?.runs ?? 0), cronMaxLateMs: fired.rows[0]?.late ?? null, rounds: scan,
      },
    };
    const r = result;
    console.log([
      '',
      '| measure | value | target |',
      '|---|---|---|',
      `| no-op runs/s, manual triggers back to back (median of ${cfg.rounds}) | ${r.throughput.runsPerSec.toFixed(0)} | ≥ 2,000 |`,
      `| trigger-to-start p50 / p99 | ${r.triggerToStartMs.p50.toFixed(2)} / ${r.triggerToStartMs.p99.toFixed(2)} ms | ≤ 5 ms p50 |`,
      `| 1 s interval lateness, idle p50 / p99 | ${r.latenessMs.idle.p50.toFixed(1)} / ${r.latenessMs.idle.p99.toFixed(1)} ms | ≤ 1 s p99 |`,
      `| 1 s interval lateness under W1 p50 / p99 | ${r.latenessMs.underW1.p50.toFixed(1)} / ${r.latenessMs.underW1.p99.toFixed(1)} ms | ≤ 1 s p99 |`,
      cfg.cronDefinitions === 0 ? '' : `| W1 with ${cfg.cronDefinitions} one-minute crons: slowdown | ${(r.scan.slowdown * 100).toFixed(1)} % (${r.scan.w1Without.toFixed(0)} → ${r.scan.w1With.toFixed(0)} req/s; ${r.scan.cronRuns} cron runs, latest start ${Number(r.scan.cronMaxLateMs ?? 0).toFixed(0)} ms after its minute) | ≤ 5 % |`,
    ].join('\n'));
    const out = join(rootDir, 'bench', 'results', 'scheduling.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    log(`results written to ${out}`);
    return 0;
  } finally {
    await db.end().catch(() => {});
    await server?.stop().catch(() => {});
    await scratch.drop().catch((e: Error) => console.error(`bench: drop ${scratch.name}: ${e.message}`));
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then((code) => process.exit(code), (err) => {
  console.error(err);
  process.exit(1);
});
