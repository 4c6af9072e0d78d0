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
  /** Connect/read/write/timeout errors plus non-2xx/3xx answers. */
  errors: number;
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
  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"errors\\":%d,\\"p50_us\\":%d,\\"p99_us\\":%d}\\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
  const file = join(dir, `${name}.lua`);
  writeFileSync(file, lua);
  return file;
}

/** Runs wrk for `durationS` seconds and parses the line the script's `done` prints. */
export function runWrk(url: string, script: string, opts: { threads: number; connections: number; durationS: number }): Promise<WrkResult> {
  const args = [`-t${opts.threads}`, `-c${opts.connections}`, `-d${opts.durationS}s`, '--timeout', '10s', '-s', script, url];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith('WRKJSON '));
      if (line === undefined) return reject(new Error(`wrk printed no result${err ? ` (${err.message})` : ''}: ${stdout.slice(-400)} ${stderr.slice(-400)}`));
      const j = JSON.parse(line.slice(8)) as { requests: number; duration_us: number; errors: number; p50_us: number; p99_us: number };
      const durationS = j.duration_us / 1e6;
      resolve({ requests: j.requests, durationS, reqPerSec: j.requests / durationS, p50Ms: j.p50_us / 1000, p99Ms: j.p99_us / 1000, errors: j.errors });
    });
  });
}
