/**
 * Outbound webhook throughput: one node (a child process, PGlite in memory
 * unless DATABASE_URL is set), one endpoint pointing at a local receiver,
 * N entity writes. Reports deliveries/s from the first write to the last
 * delivery received, and the commit → receive latency p50/p99 (measured
 * from the write request's start).
 *
 *   node dist/bench/webhooks/throughput.js              # WH_N=2000 WH_CONCURRENCY=32
 *   WH_N=10000 node dist/bench/webhooks/throughput.js
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeServer } from '../server-process.js';
import { adminPoster } from '../admin-post.js';

const N = Number(process.env.WH_N ?? 2000);
const CONCURRENCY = Number(process.env.WH_CONCURRENCY ?? 32);
const here = dirname(fileURLToPath(import.meta.url));
const pct = (xs: number[], p: number): number => (xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);

async function main(): Promise<void> {
  const received = new Map<string, number>();
  let done: () => void = () => undefined;
  const all = new Promise<void>((r) => (done = r));
  const rx = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { entityId: string } };
      received.set(body.data.entityId, performance.now());
      res.writeHead(204).end();
      if (received.size >= N) done();
    });
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  const rxUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;

  const admin = `bench-${randomBytes(8).toString('hex')}`;
  const server = await startNodeServer({
    name: 'webhooks', script: join(here, '..', '..', 'main.js'), cwd: process.cwd(), host: '127.0.0.1',
    env: { SERVICE_ADMIN_TOKEN: admin, DATA_DIR: 'memory:', LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    unsetEnv: ['DATA_DIR', 'NATS_URL', 'PORT', 'HOST'], startTimeoutMs: 60_000, verbose: false,
  });
  try {
    const scope = { 'x-service-tenant': 'bench', 'x-service-project': 'app' };
    const post = adminPoster(server.url, admin);
    await post('/api/TenantRecord', { slug: 'bench', name: 'Bench' });
    await post('/api/projects/create', { tenant: 'bench', slug: 'app', name: 'App' });
    await post('/api/Schema/entities', { entityName: 'Tick', fields: [{ name: 'n', type: 'Int', nullable: false }] }, scope);
    await post('/api/webhooks/endpoints', { url: rxUrl, eventTypeFilter: 'entity.Tick.created' }, scope);

    const started = new Map<string, number>();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const n = next++;
        const at = performance.now();
        const r = await post('/api/ticks', { n }, scope);
        started.set(String(r.data.id), at);
      }
    }));
    const writesDone = performance.now();
    const timeout = setTimeout(() => done(), 120_000);
    await all;
    clearTimeout(timeout);
    const last = Math.max(...received.values());
    const lat = [...received].map(([id, t]) => t - (started.get(id) ?? t)).sort((a, b) => a - b);
    const result = {
      deliveries: received.size, writes: N,
      writesPerSecond: Math.round(N / ((writesDone - t0) / 1000)),
      deliveriesPerSecond: Math.round(received.size / ((last - t0) / 1000)),
      latencyMs: { p50: Math.round(pct(lat, 50)), p99: Math.round(pct(lat, 99)) },
      storage: process.env.DATABASE_URL === undefined ? 'pglite (in memory)' : 'postgres',
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await server.stop();
    rx.closeAllConnections();
    rx.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
