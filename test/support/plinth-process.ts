/**
 * A Plinth node as a real child process (`node dist/main.js`), for the cluster
 * fault tests, `npm run cluster` and the cluster benchmark. Unlike
 * `startServer()` (in-process), this one can be killed with SIGKILL like a
 * crashed machine, or stopped with SIGTERM to watch the graceful drain.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_PASSWORD_HASH_COST } from './server.js';

/** dist/main.js (this file is dist/test/support/plinth-process.js once compiled). */
export const PLINTH_MAIN = fileURLToPath(new URL('../../main.js', import.meta.url));

export interface PlinthProcessOptions {
  /** PostgreSQL URL; omitted means embedded PGlite in memory (single-node mode). */
  databaseUrl?: string | null;
  /** Comma-separated NATS URLs: cluster mode. */
  natsUrl?: string | null;
  adminToken: string;
  nodeId: string;
  /** 0 (default) picks a free port; the banner tells which. */
  port?: number;
  host?: string;
  /** LOG_LEVEL, default warn. */
  logLevel?: string;
  /** Extra variables (override everything above). */
  env?: Record<string, string>;
  /** How long to wait for the banner (default 60 s). */
  startTimeoutMs?: number;
  /** Mirror the child's output to this process's stderr, prefixed with the node id. */
  echo?: boolean;
  cwd?: string;
}

export interface PlinthProcess {
  readonly url: string;
  readonly nodeId: string;
  readonly pid: number;
  /** Resolves with the exit code (null when killed by a signal) once the process is gone. */
  readonly exited: Promise<number | null>;
  alive(): boolean;
  /** SIGKILL, as in a crash: no drain, no goodbye. Resolves once the process is gone. */
  kill9(): Promise<void>;
  /**
   * SIGTERM and wait for the exit (graceful drain); after `timeoutMs` (default 30 s)
   * SIGKILL and resolve with null. Returns the exit code.
   */
  terminate(timeoutMs?: number): Promise<number | null>;
  /** SIGSTOP: the process is frozen (sockets stay open, nothing runs), as in a long GC pause or a stalled VM. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Everything the process printed so far (stdout and stderr interleaved, capped at the last 4 MB). */
  output(): string;
}

const MAX_OUTPUT = 4 * 1024 * 1024;
const live = new Set<ChildProcess>();
let exitHook = false;

/** Kills (SIGKILL) every Plinth child still running; call it from `after`. */
export async function reapPlinthProcesses(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const c of live) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    waits.push(new Promise((r) => c.once('exit', r)));
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all(waits);
}

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  // Last resort: a test runner that exits early must not leave nodes behind.
  process.on('exit', () => {
    for (const c of live) {
      try {
        c.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Starts `node dist/main.js` and resolves once it printed `Plinth listening on http://…`. */
export function startPlinthProcess(opts: PlinthProcessOptions): Promise<PlinthProcess> {
  installExitHook();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOST: opts.host ?? '127.0.0.1',
    PORT: String(opts.port ?? 0),
    GRPC_PORT: '0',
    // Nothing on disk: the admin token comes from the environment, rows from DATABASE_URL.
    DATA_DIR: 'memory:',
    SERVICE_ADMIN_TOKEN: opts.adminToken,
    NODE_ID: opts.nodeId,
    LOG_LEVEL: opts.logLevel ?? 'warn',
    PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
    ...(opts.databaseUrl == null ? {} : { DATABASE_URL: opts.databaseUrl }),
    ...(opts.natsUrl == null ? {} : { NATS_URL: opts.natsUrl }),
    ...opts.env,
  };
  const child = spawn(process.execPath, [PLINTH_MAIN], { env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  const append = (b: Buffer): void => {
    const s = b.toString();
    out += s;
    if (out.length > MAX_OUTPUT) out = out.slice(out.length - MAX_OUTPUT);
    if (opts.echo === true) {
      for (const line of s.split('\n')) if (line !== '') process.stderr.write(`[${opts.nodeId}] ${line}\n`);
    }
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    });
  });
  let spawnError: Error | null = null;
  child.once('error', (err) => (spawnError = err));

  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const kill9 = async (): Promise<void> => {
    if (!alive()) return;
    child.kill('SIGKILL');
    await exited;
  };
  const terminate = async (timeoutMs = 30_000): Promise<number | null> => {
    if (!alive()) return exited;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const first = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    if (first !== 'timeout') return first;
    child.kill('SIGKILL');
    await exited;
    return null;
  };

  const signal = (sig: NodeJS.Signals): void => {
    if (alive()) child.kill(sig);
  };

  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  return new Promise<PlinthProcess>((resolve, reject) => {
    let done = false;
    const fail = (why: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (alive()) child.kill('SIGKILL');
      reject(new Error(`Plinth node ${opts.nodeId}: ${why}\n--- output ---\n${out.slice(-8000)}`));
    };
    const timer = setTimeout(() => fail(`no banner within ${timeoutMs} ms`), timeoutMs);
    const onData = (): void => {
      if (done) return;
      const m = /Plinth listening on (http:\/\/[^\s)]+)/.exec(out);
      if (m === null) return;
      done = true;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({ url: m[1]!, nodeId: opts.nodeId, pid: child.pid ?? -1, exited, alive, kill9, terminate, pause: () => signal('SIGSTOP'), resume: () => signal('SIGCONT'), output: () => out });
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => fail(`exited (code ${code}, signal ${child.signalCode}${spawnError === null ? '' : `, ${(spawnError as Error).message}`}) before the banner`));
  });
}
