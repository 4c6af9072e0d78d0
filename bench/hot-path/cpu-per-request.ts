/**
 * CPU time per request of a measured wrk run: the server process's and its
 * database backends', from /proc (the database must run on this machine).
 * Unlike req/s, CPU per request barely moves when other jobs share the cores
 * (it counts the work a request costs, not how much of the machine it got),
 * so ratios of it hold on a busy machine where ratios of req/s drift.
 */
import pg from 'pg';
import { cpuMs } from './db-cost.js';

export interface CpuPerRequest {
  /** µs of the server process's CPU per request. */
  serverCpuUs: number;
  /** µs of the database backends' CPU per request. */
  dbCpuUs: number;
}

/** Reads the counters of `serverPid` and of every backend of `databaseUrl`'s database around a run. */
export async function cpuAround<T extends { requests: number }>(serverPid: number, databaseUrl: string, run: () => Promise<T>): Promise<T & CpuPerRequest> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    // Backends are listed after the warm-up: the server's pools are open by then.
    const pids = (await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => Number(r.pid));
    const server0 = cpuMs([serverPid]);
    const db0 = cpuMs(pids);
    const r = await run();
    const perRequest = (ms: number): number => (r.requests > 0 ? (ms * 1000) / r.requests : NaN);
    return { ...r, serverCpuUs: perRequest(cpuMs([serverPid]) - server0), dbCpuUs: perRequest(cpuMs(pids) - db0) };
  } finally {
    await c.end();
  }
}
