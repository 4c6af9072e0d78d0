import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Storage backends the Plinth server can run on. */
export type Backend = 'postgres' | 'pglite';

/** Everything the harness reads from the environment, resolved once. */
export interface BenchConfig {
  /** Measured seconds per workload and target, split evenly over the rounds. */
  durationS: number;
  /** PostgreSQL: rounds of (plinth, baseline) in alternating order; 2 = plinth, baseline, baseline, plinth. */
  rounds: number;
  /** Unmeasured warm-up seconds before each workload. */
  warmupS: number;
  connections: number;
  backends: Backend[];
  /** Connection string of an existing database used to CREATE/DROP the scratch database. */
  adminDatabaseUrl: string;
  seedRows: number;
  /** pg pool size of the bare baseline and of the server (passed as DB_POOL_SIZE). */
  poolSize: number;
  startTimeoutS: number;
  /** Hard cap for the whole run; the process kills its children and exits when it is reached. */
  maxRunMinutes: number;
  adminToken: string;
  host: string;
  /** Repository root (the folder holding package.json and dist/). */
  rootDir: string;
  /** The Plinth entry point: dist/main.js unless BENCH_SERVER_SCRIPT names another (relative to the root). */
  serverScript: string;
  baselineScript: string;
  resultsFile: string;
  verbose: boolean;
}

export function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got ${JSON.stringify(raw)}`);
  return Math.floor(n);
}

function backendsEnv(): Backend[] {
  const raw = process.env.BENCH_BACKENDS ?? 'postgres,pglite';
  const out: Backend[] = [];
  for (const part of raw.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (part !== 'postgres' && part !== 'pglite') throw new Error(`BENCH_BACKENDS: unknown backend ${JSON.stringify(part)}`);
    if (!out.includes(part)) out.push(part);
  }
  if (out.length === 0) throw new Error('BENCH_BACKENDS selects no backend');
  return out;
}

export function loadConfig(): BenchConfig {
  // This file is dist/bench/config.js once compiled: the repository root is two levels up.
  const here = dirname(fileURLToPath(import.meta.url));
  const rootDir = resolve(here, '..', '..');
  return {
    durationS: intEnv('BENCH_DURATION_S', 8, 1),
    warmupS: intEnv('BENCH_WARMUP_S', 2, 0),
    rounds: intEnv('BENCH_ROUNDS', 2, 1),
    connections: intEnv('BENCH_CONNECTIONS', 32, 1),
    backends: backendsEnv(),
    adminDatabaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    seedRows: intEnv('BENCH_SEED_ROWS', 2000, 20),
    poolSize: intEnv('BENCH_PG_POOL', 10, 1),
    startTimeoutS: intEnv('BENCH_START_TIMEOUT_S', 60, 1),
    maxRunMinutes: intEnv('BENCH_MAX_MINUTES', 20, 1),
    adminToken: `bench-${randomBytes(24).toString('hex')}`,
    host: '127.0.0.1',
    rootDir,
    serverScript: resolve(rootDir, process.env.BENCH_SERVER_SCRIPT ?? join('dist', 'main.js')),
    baselineScript: resolve(here, 'baseline-server.js'),
    resultsFile: resolve(rootDir, 'bench', 'results', 'latest.json'),
    verbose: process.env.BENCH_VERBOSE === '1',
  };
}
