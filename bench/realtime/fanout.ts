/**
 * Realtime fan-out: N WebSocket subscribers on one node (a child process,
 * PGlite in memory unless DATABASE_URL is set), W writes/s for S seconds.
 * Reports delivery latency from the write request's start (an upper bound of
 * commit → client) and from the write's acknowledgement, p50/p99, the
 * delivered count, and the server's RSS per connection.
 *
 *   node dist/bench/realtime/fanout.js            # RT_N=1000 RT_W=100 RT_SECONDS=5
 *   RT_N=5000 RT_W=200 node dist/bench/realtime/fanout.js
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startNodeServer } from '../server-process.js';
import { adminPoster } from '../admin-post.js';

const N = Number(process.env.RT_N ?? 1000);
const W = Number(process.env.RT_W ?? 100);
const SECONDS = Number(process.env.RT_SECONDS ?? 5);
const here = dirname(fileURLToPath(import.meta.url));
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
/** User+system CPU seconds of a process (clock ticks of 100 Hz). */
const cpuOf = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const pct = (xs: number[], p: number): number => (xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);

async function main(): Promise<void> {
  const admin = `bench-${randomBytes(8).toString('hex')}`;
  const server = await startNodeServer({
    name: 'realtime', script: join(here, '..', '..', 'main.js'), cwd: process.cwd(), host: '127.0.0.1',
    env: { SERVICE_ADMIN_TOKEN: admin, DATA_DIR: 'memory:', LOG_LEVEL: 'warn', REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT: String(N + 10) },
    unsetEnv: ['DATA_DIR', 'NATS_URL', 'PORT', 'HOST'], startTimeoutMs: 60_000, verbose: false,
  });
  try {
    const post = adminPoster(server.url, admin);
    await post('/api/TenantRecord', { slug: 'bench', name: 'Bench' });
    await post('/api/projects/create', { tenant: 'bench', slug: 'app', name: 'App' });
    const scope = { 'x-service-tenant': 'bench', 'x-service-project': 'app' };
    await post('/api/Schema/entities', { entityName: 'Tick', fields: [{ name: 'n', type: 'Int', nullable: false }] }, scope);

    const rssBefore = rssOf(server.pid);
    const arrivals: Array<Map<string, number>> = [];
    const sockets: WebSocket[] = [];
    const url = `${server.url.replace('http', 'ws')}/api/realtime?tenant=bench&project=app&access_token=${admin}`;
    const BATCH = 200;
    for (let i = 0; i < N; i += BATCH) {
      await Promise.all(Array.from({ length: Math.min(BATCH, N - i) }, () => new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(url);
        const seen = new Map<string, number>();
        arrivals.push(seen);
        sockets.push(ws);
        ws.on('message', (d) => {
          const m = JSON.parse(d.toString()) as { type: string; entityId?: string };
          if (m.type === 'subscribed') resolve();
          else if (m.type === 'change') seen.set(m.entityId!, performance.now());
          else if (m.type === 'error') reject(new Error(d.toString()));
        });
        ws.once('open', () => ws.send('{"type":"subscribe","id":"s","entity":"Tick"}'));
        ws.once('error', reject);
      })));
    }
    await new Promise((r) => setTimeout(r, 500));
    const rssConnected = rssOf(server.pid);

    const started = new Map<string, number>();
    const acked = new Map<string, number>();
    const writes: Array<Promise<void>> = [];
    const total = W * SECONDS;
    const cpu0 = cpuOf(server.pid);
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / W;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const s = performance.now();
      writes.push(post('/api/ticks', { n: i }, scope).then((b: { data: { id: string } }) => {
        started.set(b.data.id, s);
        acked.set(b.data.id, performance.now());
      }));
    }
    await Promise.all(writes);
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline && arrivals.some((a) => a.size < total)) await new Promise((r) => setTimeout(r, 100));
    const serverCpuSeconds = cpuOf(server.pid) - cpu0;
    const wallSeconds = (performance.now() - t0) / 1000;
    const fromStart: number[] = [];
    const fromAck: number[] = [];
    let delivered = 0;
    for (const a of arrivals) {
      for (const [id, at] of a) {
        delivered++;
        fromStart.push(at - started.get(id)!);
        fromAck.push(Math.max(0, at - acked.get(id)!));
      }
    }
    fromStart.sort((x, y) => x - y);
    fromAck.sort((x, y) => x - y);
    const achieved = total / ((performance.now() - t0) / 1000);
    console.log(JSON.stringify({
      subscribers: N, writesPerSecond: W, seconds: SECONDS, writes: total, expected: total * N, delivered,
      latencyFromWriteStartMs: { p50: +pct(fromStart, 50).toFixed(1), p99: +pct(fromStart, 99).toFixed(1) },
      latencyAfterAckMs: { p50: +pct(fromAck, 50).toFixed(1), p99: +pct(fromAck, 99).toFixed(1) },
      serverCpu: { seconds: +serverCpuSeconds.toFixed(2), ofWallSeconds: +wallSeconds.toFixed(2), microsPerDelivery: +((serverCpuSeconds * 1e6) / Math.max(1, delivered)).toFixed(1) },
      serverRssPerConnectionBytes: Math.round((rssConnected - rssBefore) / N),
      serverRssMiB: { before: Math.round(rssBefore / 2 ** 20), connected: Math.round(rssConnected / 2 ** 20) },
      note: achieved < W * 0.9 ? `writes achieved only ~${achieved.toFixed(0)}/s` : undefined,
    }, null, 2));
    for (const ws of sockets) ws.terminate();
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
