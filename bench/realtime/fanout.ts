/**
 * Realtime fan-out: N WebSocket subscribers on one node, W writes/s for S
 * seconds. The node runs in its own process (PGlite in memory unless
 * DATABASE_URL is set); the subscribers are lean raw-socket clients spread
 * over RT_PROCS child processes (subscriber-process.ts), so the harness
 * costs as little CPU per message as possible on the same machine.
 *
 * Reports delivery latency p50/p99/max over every delivery, from the write
 * request's start (an upper bound of commit → client) and from the write's
 * acknowledgement, the delivered count, server CPU per delivery and the
 * server's RSS per connection.
 *
 *   node dist/bench/realtime/fanout.js                     # RT_N=1000 RT_W=100 RT_SECONDS=5
 *   DATABASE_URL=postgres://… RT_N=10000 RT_W=500 RT_BATCH=10 node dist/bench/realtime/fanout.js
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeServer } from '../server-process.js';
import { adminPoster } from '../admin-post.js';
import { intEnv } from '../config.js';

const N = intEnv('RT_N', 1000, 1);
const W = intEnv('RT_W', 100, 1);
const SECONDS = intEnv('RT_SECONDS', 5, 1);
const PROCS = intEnv('RT_PROCS', 2, 1);
/** Rows per write request (`POST /api/ticks/batch` when > 1): W stays rows (events) per second. */
const BATCH = intEnv('RT_BATCH', 1, 1);
const here = dirname(fileURLToPath(import.meta.url));
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
/** User+system CPU seconds of a process (clock ticks of 100 Hz). */
const cpuSplitOf = (pid: number): { user: number; system: number } => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(f[11]) / 100, system: Number(f[12]) / 100 };
};
const cpuOf = (pid: number): number => {
  const c = cpuSplitOf(pid);
  return c.user + c.system;
};
const epochNow = (): number => performance.timeOrigin + performance.now();

interface ChildResult { frames: number; bytes: number; closedEarly: number; fromStart: number[]; fromAck: number[]; delivered: number; unknown: number }

/** Percentile of a 1 ms histogram. */
function pct(h: number[], total: number, p: number): number {
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (let ms = 0; ms < h.length; ms++) {
    seen += h[ms]!;
    if (seen >= rank) return ms;
  }
  return NaN;
}
const maxOf = (h: number[]): number => {
  for (let ms = h.length - 1; ms >= 0; ms--) if (h[ms]! > 0) return ms;
  return NaN;
};

function startSubscribers(url: URL, path: string, count: number): { child: ChildProcess; ready: Promise<void>; result: Promise<ChildResult> } {
  const child = fork(join(here, 'subscriber-process.js'), [], {
    env: { ...process.env, RT_HOST: url.hostname, RT_PORT: url.port, RT_PATH: path, RT_COUNT: String(count), RT_SUBSCRIBE: '{"type":"subscribe","id":"s","entity":"Tick"}' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let onResult: (r: ChildResult) => void = () => undefined;
  const result = new Promise<ChildResult>((resolve) => (onResult = resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type: string; error?: string } & ChildResult) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'result') onResult(m);
      else if (m.type === 'failed') reject(new Error(`subscriber process: ${m.error}`));
    });
    child.once('exit', (code) => code !== 0 && reject(new Error(`subscriber process exited ${code}`)));
  });
  return { child, ready, result };
}

async function main(): Promise<void> {
  const admin = `bench-${randomBytes(8).toString('hex')}`;
  const server = await startNodeServer({
    name: 'realtime', script: join(here, '..', '..', 'main.js'), cwd: process.cwd(), host: '127.0.0.1',
    env: { SERVICE_ADMIN_TOKEN: admin, DATA_DIR: 'memory:', LOG_LEVEL: 'warn', REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT: String(N + 10), MAX_STREAMS_PER_NODE: String(N + 10) },
    unsetEnv: ['DATA_DIR', 'NATS_URL', 'PORT', 'HOST'], startTimeoutMs: 60_000, verbose: false,
  });
  const children: ChildProcess[] = [];
  try {
    const post = adminPoster(server.url, admin);
    await post('/api/TenantRecord', { slug: 'bench', name: 'Bench' });
    await post('/api/projects/create', { tenant: 'bench', slug: 'app', name: 'App' });
    const scope = { 'x-service-tenant': 'bench', 'x-service-project': 'app' };
    await post('/api/Schema/entities', { entityName: 'Tick', fields: [{ name: 'n', type: 'Int', nullable: false }] }, scope);

    const rssBefore = rssOf(server.pid);
    const url = new URL(server.url);
    const path = `/api/realtime?tenant=bench&project=app&access_token=${admin}`;
    const subs = Array.from({ length: PROCS }, (_, i) => startSubscribers(url, path, Math.floor(N / PROCS) + (i < N % PROCS ? 1 : 0)));
    children.push(...subs.map((s) => s.child));
    const connectStart = performance.now();
    await Promise.all(subs.map((s) => s.ready));
    const connectSeconds = (performance.now() - connectStart) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    const rssConnected = rssOf(server.pid);

    const writes: Array<[string, number, number]> = [];
    const pending: Array<Promise<void>> = [];
    const total = W * SECONDS;
    const cpu0 = cpuOf(server.pid);
    const sys0 = cpuSplitOf(server.pid).system;
    const childCpu0 = subs.reduce((n, s) => n + cpuOf(s.child.pid!), 0);
    const t0 = performance.now();
    let failed = 0;
    for (let i = 0; i < total; i += BATCH) {
      const wait = t0 + (i * 1000) / W - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const s = epochNow();
      const rows = Math.min(BATCH, total - i);
      const req = rows === 1
        ? post('/api/ticks', { n: i }, scope).then((b: { data: { id: string } }) => [b.data.id])
        : post('/api/ticks/batch', { items: Array.from({ length: rows }, (_, k) => ({ n: i + k })) }, scope).then((b: { data: Array<{ id: string }> }) => b.data.map((r) => r.id));
      pending.push(req.then((ids) => {
        const acked = epochNow();
        for (const id of ids) writes.push([id, s, acked]);
      }, () => void (failed += rows)));
    }
    await Promise.all(pending);
    const writeSeconds = (performance.now() - t0) / 1000;
    // Let the last deliveries land (the children count whatever arrives until asked).
    await new Promise((r) => setTimeout(r, 3000));
    const serverCpuSeconds = cpuOf(server.pid) - cpu0;
    const serverSystemSeconds = cpuSplitOf(server.pid).system - sys0;
    const clientCpuSeconds = subs.reduce((n, s) => n + cpuOf(s.child.pid!), 0) - childCpu0;
    for (const s of subs) s.child.send({ type: 'report', writes });
    const results = await Promise.all(subs.map((s) => s.result));

    const fromStart = new Array<number>(results[0]!.fromStart.length).fill(0);
    const fromAck = new Array<number>(fromStart.length).fill(0);
    for (const r of results) r.fromStart.forEach((n, i) => (fromStart[i]! += n));
    for (const r of results) r.fromAck.forEach((n, i) => (fromAck[i]! += n));
    const delivered = results.reduce((n, r) => n + r.delivered, 0);
    const summary = (h: number[]) => ({ p50: pct(h, delivered, 50), p99: pct(h, delivered, 99), max: maxOf(h) });
    console.log(JSON.stringify({
      backend: process.env.DATABASE_URL === undefined ? 'pglite' : 'postgres',
      subscribers: N, subscriberProcesses: PROCS, connectSeconds: +connectSeconds.toFixed(1),
      writesPerSecond: { target: W, achieved: +(writes.length / writeSeconds).toFixed(0) }, rowsPerRequest: BATCH, seconds: SECONDS, writes: writes.length, failedWrites: failed,
      expected: writes.length * N, delivered, closedEarly: results.reduce((n, r) => n + r.closedEarly, 0),
      latencyFromWriteStartMs: summary(fromStart),
      latencyAfterAckMs: summary(fromAck),
      deliveriesPerSecond: Math.round(delivered / writeSeconds),
      serverCpu: { seconds: +serverCpuSeconds.toFixed(2), kernelSeconds: +serverSystemSeconds.toFixed(2), ofWallSeconds: +(writeSeconds + 3).toFixed(2), microsPerDelivery: +((serverCpuSeconds * 1e6) / Math.max(1, delivered)).toFixed(2) },
      subscriberCpuSeconds: +clientCpuSeconds.toFixed(2),
      serverRssPerConnectionBytes: Math.round((rssConnected - rssBefore) / N),
      serverRssMiB: { before: Math.round(rssBefore / 2 ** 20), connected: Math.round(rssConnected / 2 ** 20) },
    }, null, 2));
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
