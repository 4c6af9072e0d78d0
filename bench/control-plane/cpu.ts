/**
 * CPU seconds an operation cost the server process and the database's backends, from /proc
 * (PostgreSQL runs on this machine). Wall time on a shared machine says how much of it the
 * operation got; CPU time says how much work it was, so it shows how a cost grows with the
 * row count even when the load average is far above the core count.
 */
import pg from 'pg';
import { cpuMs } from '../hot-path/db-cost.js';

export interface CpuCost {
  wallS: number;
  serverCpuS: number;
  dbCpuS: number;
}

async function backendPids(c: pg.Client): Promise<number[]> {
  const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return r.rows.map((x) => Number(x.pid));
}

/** Runs `op` and reports its wall time and the CPU the server and the database backends spent meanwhile (run it with nothing else on the server). */
export async function cpuOf(serverPid: number, databaseUrl: string, op: () => Promise<unknown>): Promise<CpuCost> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const before = new Map((await backendPids(c)).map((pid) => [pid, cpuMs([pid])]));
    const server0 = cpuMs([serverPid]);
    const t0 = performance.now();
    await op();
    const wallS = (performance.now() - t0) / 1000;
    const serverCpuS = (cpuMs([serverPid]) - server0) / 1000;
    // A backend opened during the operation counts from zero; one that ended meanwhile is lost (pools keep theirs).
    let db = 0;
    for (const pid of await backendPids(c)) db += cpuMs([pid]) - (before.get(pid) ?? 0);
    return { wallS, serverCpuS, dbCpuS: db / 1000 };
  } finally {
    await c.end();
  }
}
