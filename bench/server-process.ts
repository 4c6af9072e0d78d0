import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A Node child process serving HTTP, started by the harness. */
export interface ChildServer {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
  stop(): Promise<void>;
  /** Last lines of the child's stdout/stderr, for error messages. */
  logTail(): string;
}

export interface StartOptions {
  name: string;
  script: string;
  cwd: string;
  host: string;
  env: Record<string, string>;
  /** Inherited variables to remove (e.g. a stray DATABASE_URL in the caller's shell). */
  unsetEnv?: string[];
  startTimeoutMs: number;
  verbose: boolean;
  /** Flags for node itself, before the script (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Last resort: whatever is still running when the harness exits gets SIGKILL. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Kill every child still running (used by signal handlers and the watchdog). */
export function killAllChildrenNow(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Ends a run that passes its time budget: every child killed, exit code 2. */
export function exitAfterMinutes(name: string, minutes: number): void {
  const watchdog = setTimeout(() => {
    console.error(`${name}: over BENCH_MAX_MINUTES=${minutes}; stopping`);
    killAllChildrenNow();
    process.exit(2);
  }, minutes * 60_000);
  watchdog.unref();
}

/** The measured commit, for the report ('unknown' outside a git checkout). */
export function gitCommit(cwd: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export async function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolvePort(port) : reject(new Error('could not allocate a port'))));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (hasExited(child)) return Promise.resolve(true);
  return new Promise((r) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      r(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      r(true);
    };
    child.once('exit', onExit);
  });
}

/**
 * Start `node <script>` on a free loopback port and wait until `GET /api/health` answers 200.
 * Throws (after killing the child) if it exits early or is not ready in time.
 */
export async function startNodeServer(opts: StartOptions): Promise<ChildServer> {
  installExitHook();
  const port = await freePort(opts.host);
  const url = `http://${opts.host}:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of opts.unsetEnv ?? []) delete env[k];
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.script], {
    cwd: opts.cwd,
    env: { GRPC_PORT: '0', ...env, ...opts.env, PORT: String(port), HOST: opts.host },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));

  const tail: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null, tag: string) => {
    if (stream === null) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(`[${opts.name} ${tag}] ${line}`);
        if (tail.length > 60) tail.shift();
        if (opts.verbose) process.stderr.write(`[${opts.name} ${tag}] ${line}\n`);
      }
    });
  };
  collect(child.stdout, 'out');
  collect(child.stderr, 'err');

  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });

  const logTail = () => tail.join('\n');
  const stop = async () => {
    if (hasExited(child)) return;
    child.kill('SIGTERM');
    if (await waitExit(child, 10_000)) return;
    child.kill('SIGKILL');
    await waitExit(child, 5_000);
  };

  const deadline = Date.now() + opts.startTimeoutMs;
  for (;;) {
    if (spawnError !== undefined || hasExited(child)) {
      await stop();
      throw new Error(
        `${opts.name} exited before it was ready (code ${child.exitCode}, signal ${child.signalCode}` +
          `${spawnError ? `, ${spawnError.message}` : ''})\n${logTail()}`,
      );
    }
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${opts.name} not ready after ${opts.startTimeoutMs} ms\n${logTail()}`);
    }
    await sleep(200);
  }

  return { name: opts.name, url, pid: child.pid ?? -1, stop, logTail };
}
