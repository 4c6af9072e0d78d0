/**
 * Which outside services the suites may use, decided in one place so that
 * the runner (scripts/run-tests.ts, which prints what is skipped) and every
 * suite (which skips) agree.
 *
 * - PostgreSQL: TEST_DATABASE_URL. `npm test` sets it to
 *   DEFAULT_TEST_DATABASE_URL when that answers and it was unset.
 * - nats-server: NATS_SERVER_BIN, else `nats-server` on PATH, else Debian's
 *   /usr/sbin/nats-server.
 *
 * With CI=true nothing is skipped: a missing service fails its suites.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';

export type Service = 'postgres' | 'nats';

/** Where `npm test` looks for PostgreSQL when TEST_DATABASE_URL is unset (the machine's own, trust auth). */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Where Debian's package puts nats-server. */
const DEBIAN_NATS_SERVER = '/usr/sbin/nats-server';

/** The nats-server binary to start, or null when there is none. */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env): string | null {
  // An explicit setting wins, and names nothing when the file is not there.
  if (env.NATS_SERVER_BIN !== undefined && env.NATS_SERVER_BIN !== '') return existsSync(env.NATS_SERVER_BIN) ? env.NATS_SERVER_BIN : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'nats-server'))) return join(dir, 'nats-server');
  }
  return existsSync(DEBIAN_NATS_SERVER) ? DEBIAN_NATS_SERVER : null;
}

/** Whether PostgreSQL at `url` accepts a connection and a query within `timeoutMs`. */
export async function postgresAnswers(url: string, timeoutMs = 2_000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** True under CI=true: a suite whose service is missing runs (and fails) instead of skipping. */
export const servicesRequired = (): boolean => process.env.CI === 'true';

export function serviceAvailable(service: Service): boolean {
  return service === 'postgres' ? (process.env.TEST_DATABASE_URL ?? '') !== '' : findNatsServer() !== null;
}

/** Why a missing service is missing, for skip reasons and the runner's summary. */
export function whyMissing(service: Service): string {
  if (service === 'postgres') return 'PostgreSQL (TEST_DATABASE_URL unset)';
  const bin = process.env.NATS_SERVER_BIN ?? '';
  return bin !== '' ? `nats-server (NATS_SERVER_BIN=${bin} does not exist)` : `nats-server (NATS_SERVER_BIN unset, none on PATH or at ${DEBIAN_NATS_SERVER})`;
}

/**
 * The `skip` option of a suite that needs `services`: false when they are all
 * there or CI=true, else the reason (node:test prints it).
 */
export function servicesSkip(...services: Service[]): string | false {
  if (servicesRequired()) return false;
  const missing = services.filter((s) => !serviceAvailable(s));
  return missing.length === 0 ? false : `needs ${missing.map(whyMissing).join(' and ')}`;
}

/**
 * Registers suites that need `services` (`register`) when they can run,
 * else one skipped suite `name` that says why: never silently absent.
 */
export function withServices(name: string, services: Service[], register: () => void): void {
  const skip = servicesSkip(...services);
  if (skip === false) register();
  else describe(name, { skip }, () => it('needs what the suite says', () => {}));
}
