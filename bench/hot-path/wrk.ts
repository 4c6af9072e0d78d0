import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What one wrk run measured. */
export interface WrkResult {
  requests: number;
  durationS: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Slowest request of the run. */
  maxMs: number;
  /** Connect/read/write/timeout errors plus non-2xx/3xx answers. */
  errors: number;
  /** wrk's own `--latency` table (percent → ms), when the run asked for it. */
  distribution?: Record<string, number>;
}

/** How one wrk run is shaped. */
export interface WrkRunOptions {
  threads: number;
  connections: number;
  durationS: number;
  /** Pass `--latency` and parse wrk's "Latency Distribution" table into `distribution`. */
  latency?: boolean;
  /**
   * Stop the run early when this settles: wrk takes SIGINT as "stop now", then reports as
   * usual, so a measurement window can end with the operation it brackets.
   */
  stopWhen?: Promise<unknown>;
}

/** One workload as wrk sees it: a request rotation written as a Lua script. */
export interface WrkScript {
  method: 'GET' | 'POST';
  /** Paths to rotate over (each thread starts at its own offset). */
  paths: string[];
  /** Bodies to rotate over (POST). */
  bodies?: string[];
  headers: Record<string, string>;
}

/** wrk is a native load generator: on two cores a Node one measures itself (issue 9). */
export function ensureWrk(): string {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (err) {
    // `wrk --version` exits 1 after printing its banner; only a missing binary is ENOENT.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return 'wrk';
    console.log('[bench] wrk not found; installing it with apt-get (Debian package "wrk")');
    execFileSync('bash', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], { stdio: 'inherit' });
  }
  return 'wrk';
}

const luaString = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
const luaList = (xs: readonly string[]): string => `{${xs.map(luaString).join(',\n')}}`;

/** Writes the Lua script for `w` into `dir` and returns its path. */
export function writeScript(dir: string, name: string, w: WrkScript): string {
  const headers = Object.entries(w.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`).join('\n');
  const lua = `
wrk.method = ${luaString(w.method)}
${headers}
local paths = ${luaList(w.paths)}
local bodies = ${luaList(w.bodies ?? [])}
local n = 0
local thread_no = 0
function setup(thread)
  thread:set("offset", thread_no * 7919)
  thread_no = thread_no + 1
end
function init(args)
  n = offset or 0
end
function request()
  n = n + 1
  local path = paths[(n % #paths) + 1]
  if #bodies > 0 then
    return wrk.format(nil, path, nil, bodies[(n % #bodies) + 1])
  end
  return wrk.format(nil, path)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"errors\\":%d,\\"p50_us\\":%d,\\"p99_us\\":%d,\\"max_us\\":%d}\\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;
  const file = join(dir, `${name}.lua`);
  writeFileSync(file, lua);
  return file;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** wrk's `--latency` table: lines like `     99%    2.51ms` after "Latency Distribution". */
export function parseLatencyDistribution(stdout: string): Record<string, number> {
  const out: Record<string, number> = {};
  const at = stdout.indexOf('Latency Distribution');
  if (at < 0) return out;
  for (const line of stdout.slice(at).split('\n').slice(1)) {
    const m = /^\s+(\d+(?:\.\d+)?)%\s+([\d.]+)(us|ms|s|m)\s*$/.exec(line);
    if (m === null) break;
    out[m[1]!] = Number(m[2]) * UNIT_MS[m[3]!]!;
  }
  return out;
}

/** Runs wrk for `durationS` seconds (or until `stopWhen` settles) and parses the line the script's `done` prints. */
export function runWrk(url: string, script: string, opts: WrkRunOptions): Promise<WrkResult> {
  const args = [`-t${opts.threads}`, `-c${opts.connections}`, `-d${opts.durationS}s`, '--timeout', '10s', ...(opts.latency === true ? ['--latency'] : []), '-s', script, url];
  return new Promise((resolve, reject) => {
    const child = execFile('wrk', args, { maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith('WRKJSON '));
      if (line === undefined) return reject(new Error(`wrk printed no result${err ? ` (${err.message})` : ''}: ${stdout.slice(-400)} ${stderr.slice(-400)}`));
      const j = JSON.parse(line.slice(8)) as { requests: number; duration_us: number; errors: number; p50_us: number; p99_us: number; max_us?: number };
      const durationS = j.duration_us / 1e6;
      resolve({
        requests: j.requests, durationS, reqPerSec: j.requests / durationS, p50Ms: j.p50_us / 1000, p99Ms: j.p99_us / 1000, maxMs: (j.max_us ?? 0) / 1000, errors: j.errors,
        ...(opts.latency === true ? { distribution: parseLatencyDistribution(stdout) } : {}),
      });
    });
    const stop = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    };
    opts.stopWhen?.then(stop, stop);
  });
}
