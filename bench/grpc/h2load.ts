import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What one h2load run measured (h2load counts HTTP statuses; gRPC errors are 200 with a grpc-status trailer, so callers probe first). */
export interface H2loadResult {
  requests: number;
  durationS: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** h2load (nghttp2's native HTTP/2 load generator) is gRPC's wrk: a Node client on two cores measures itself. */
export function ensureH2load(): boolean {
  try {
    execFileSync('h2load', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    try {
      console.log('[bench:grpc] h2load not found; installing it with apt-get (Debian package "nghttp2-client")');
      execFileSync('bash', ['-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client'], { stdio: 'inherit' });
      return true;
    } catch {
      return false;
    }
  }
}

/** One gRPC message as an HTTP/2 DATA payload: the 5-byte length prefix, uncompressed. */
export function writeGrpcBody(dir: string, name: string, message: Uint8Array): string {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  const file = join(dir, `${name}.grpc`);
  writeFileSync(file, Buffer.concat([prefix, message]));
  return file;
}

/**
 * Runs h2load against one gRPC method for `durationS` seconds after a
 * warm-up, `clients` connections with `streams` calls in flight each.
 */
export function runH2load(url: string, body: string, headers: Record<string, string>, opts: { clients: number; streams: number; warmupS: number; durationS: number }): Promise<H2loadResult> {
  const args = [
    '-c', String(opts.clients), '-m', String(opts.streams), '-t', '1', '-D', String(opts.durationS), '--warm-up-time', String(opts.warmupS),
    '-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile('h2load', args, { maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      const done = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(stdout);
      const finished = /finished in ([\d.]+)(m?s), ([\d.]+) req\/s/.exec(stdout);
      const lat = /time for request:\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)/.exec(stdout);
      if (done === null || finished === null) return reject(new Error(`h2load printed no result${err ? ` (${err.message})` : ''}: ${stdout.slice(-600)} ${stderr.slice(-400)}`));
      const ms = (v: string, unit: string): number => Number(v) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);
      const requests = Number(done[4]);
      const durationS = ms(finished[1]!, finished[2]!) / 1000;
      // h2load prints min, max and mean per request; the mean stands in for p50 here.
      resolve({ requests, durationS, reqPerSec: Number(finished[3]), p50Ms: lat === null ? 0 : ms(lat[5]!, lat[6]!), p99Ms: lat === null ? 0 : ms(lat[3]!, lat[4]!), errors: Number(done[5]) + Number(done[6]) });
    });
  });
}

/** One server-streaming call read to its end by h2load: its wall time in seconds (the stream's rows are counted by the caller). */
export function timeOneStream(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const args = ['-n', '1', '-c', '1', '-t', '1', '-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  return new Promise((resolve, reject) => {
    execFile('h2load', args, { maxBuffer: 8 * 1024 * 1024 }, (err, stdout) => {
      const finished = /finished in ([\d.]+)(m?s)/.exec(stdout);
      const ok = /requests: 1 total, 1 started, 1 done, 1 succeeded/.test(stdout);
      if (finished === null || !ok) return reject(new Error(`h2load stream failed${err ? ` (${err.message})` : ''}: ${stdout.slice(-600)}`));
      resolve(Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1));
    });
  });
}
