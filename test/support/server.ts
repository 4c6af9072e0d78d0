import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import { parseConfig } from '../../node/config.js';
import { withServices } from './services.js';
import { startNode, type RunningNode } from '../../node/start.js';

export type Backend = 'pglite' | 'postgres';

export interface TestServer {
  url: string;
  adminToken: string;
  backend: Backend;
  /** The database URL when backend is postgres (tests may inspect rows directly). */
  databaseUrl: string | null;
  /** Data directory (PGlite) so a test can restart on the same data. */
  dataDir: string;
  node: RunningNode;
  /** Stops the node; keeps the data unless `drop` (default true at close). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  backend?: Backend;
  /** Reuse the data of an earlier server (restart tests). */
  reuse?: { dataDir: string; databaseUrl: string | null };
  /** PGlite on disk instead of in memory (restart tests). */
  persistent?: boolean;
  env?: Record<string, string>;
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? null;

/** log2 of scrypt's N in test servers (README: PASSWORD_HASH_COST is for test suites below 17). */
export const TEST_PASSWORD_HASH_COST = '14';

/** The backends to run on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set (forEachBackend). */
export const BACKENDS: Backend[] = TEST_DATABASE_URL === null ? ['pglite'] : ['pglite', 'postgres'];

/** Creates an empty database next to TEST_DATABASE_URL's and returns its URL. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (TEST_DATABASE_URL === null) throw new Error('TEST_DATABASE_URL is not set');
  const name = `plinth_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Starts a real node on a free loopback port. */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const backend = opts.backend ?? 'pglite';
  const adminToken = `test-admin-${randomBytes(12).toString('hex')}`;
  let dataDir: string;
  let databaseUrl: string | null = null;
  let dropDb: (() => Promise<void>) | null = null;
  let ownsDir = false;
  if (opts.reuse !== undefined) {
    dataDir = opts.reuse.dataDir;
    databaseUrl = opts.reuse.databaseUrl;
  } else {
    dataDir = opts.persistent === true ? mkdtempSync(join(tmpdir(), 'plinth-test-')) : 'memory:';
    ownsDir = opts.persistent === true;
    if (backend === 'postgres') {
      const db = await createTestDatabase();
      databaseUrl = db.url;
      dropDb = db.drop;
    }
  }
  const config = parseConfig({
    HOST: '127.0.0.1', PORT: '0', GRPC_PORT: '0', DATA_DIR: dataDir, SERVICE_ADMIN_TOKEN: adminToken, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Suites register and log in hundreds of users: the test-only cost (2^14, not 2^17) keeps them fast.
    // A test of the default cost passes PASSWORD_HASH_COST: '17' in `env`.
    PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
    // One sandbox worker per test node: suites start many nodes on a small machine; a suite that needs more passes AUTHORED_WORKERS in `env`.
    AUTHORED_WORKERS: '1',
    // Every REST answer of a declared operation is checked against its declared schema (a mismatch answers 500).
    CHECK_ANSWERS: 'true',
    ...(process.env.CHECK_ANSWERS_LOG === undefined ? {} : { CHECK_ANSWERS_LOG: process.env.CHECK_ANSWERS_LOG }),
    ...(databaseUrl === null ? {} : { DATABASE_URL: databaseUrl, DB_POOL_SIZE: '8' }),
    ...opts.env,
  });
  const node = await startNode(config);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await node.stop();
  };
  return {
    url: node.url, adminToken, backend, databaseUrl, dataDir, node, stop,
    close: async () => {
      await stop();
      if (dropDb !== null) await dropDb();
      if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` once per backend inside a describe named after it; without PostgreSQL its half is a skipped suite saying why. */
export function forEachBackend(name: string, fn: (backend: Backend) => void): void {
  describe(`${name} [pglite]`, () => fn('pglite'));
  withServices(`${name} [postgres]`, ['postgres'], () => describe(`${name} [postgres]`, () => fn('postgres')));
}
