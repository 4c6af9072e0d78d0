/**
 * gRPC bench (issue 13): gRPC Get and List (20 rows) against REST's W1/W2 in
 * the same run and the same server start, and StreamList of many rows (rows
 * per second and the server's peak RSS). Not part of `npm test`:
 *
 *   node dist/bench/grpc/run.js
 *   BENCH_DURATION_S=10 BENCH_STREAM_ROWS=100000 BENCH_DATABASE_URL=postgres://… node dist/bench/grpc/run.js
 *
 * REST is measured twice: with wrk (native, as `npm run bench` does) and
 * with the same Node load generator as gRPC (bench/grpc/load.ts, its own
 * process), so the ratio that compares like with like is the second.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { intEnv } from '../config.js';
import { createScratchDatabase, type ScratchDatabase } from '../db.js';
import { call, expectStatus } from '../http-call.js';
import { freePort, startNodeServer, type ChildServer } from '../server-process.js';
import { ensureWrk, runWrk, writeScript } from '../hot-path/wrk.js';
import type { LoadConfig, LoadResult } from './load.js';
import { ensureH2load, runH2load, timeOneStream, writeGrpcBody } from './h2load.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const cfg = {
  rows: intEnv('BENCH_ROWS', 5_000, 100),
  streamRows: intEnv('BENCH_STREAM_ROWS', 100_000, 1_000),
  warmupS: intEnv('BENCH_WARMUP_S', 2, 0),
  durationS: intEnv('BENCH_DURATION_S', 8, 1),
  concurrency: intEnv('BENCH_CONNECTIONS', 32, 1),
  channels: intEnv('BENCH_GRPC_CHANNELS', 4, 1),
  /** h2load connections; the calls in flight (BENCH_CONNECTIONS) are spread over them as streams. */
  h2Clients: intEnv('BENCH_H2_CLIENTS', 4, 1),
  databaseUrl: process.env.BENCH_DATABASE_URL ?? null,
  /** Only these workloads (names as printed, comma-separated); all by default. */
  only: process.env.BENCH_WORKLOADS?.split(',').map((x) => x.trim()) ?? null,
  /** Write the server's V8 CPU profile here (node --cpu-prof), for bench/hot-path/profile-summary.js. */
  cpuProfileDir: process.env.BENCH_CPU_PROF_DIR ?? null,
};
const log = (s: string): void => console.log(`[bench:grpc] ${s}`);
/** Temp dirs of wrk scripts and h2load bodies, removed at the end. */
const scratchDirs: string[] = [];

const ORDER_FIELDS = [
  { name: 'customerName', type: 'String', nullable: false },
  { name: 'status', type: 'Enum', nullable: false, values: ['open', 'paid', 'shipped', 'cancelled'] },
  { name: 'total', type: 'Decimal', nullable: false },
  { name: 'qty', type: 'Int', nullable: false },
];
const STATUSES = ['open', 'paid', 'shipped', 'cancelled'];

function runLoad(c: LoadConfig): Promise<LoadResult> {
  return new Promise((res, rej) => {
    execFile(process.execPath, [join(HERE, 'load.js'), JSON.stringify(c)], { maxBuffer: 8 * 1024 * 1024, timeout: (c.warmupS + c.durationS + 60) * 1000 }, (err, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith('LOADJSON '));
      if (line === undefined) return rej(new Error(`load generator printed nothing${err ? ` (${err.message})` : ''}: ${stderr.slice(-400)}`));
      res(JSON.parse(line.slice(9)) as LoadResult);
    });
  });
}

/** CPU seconds (user + system) the process used so far. */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
};

/** The server's resident set (VmRSS) in MiB. */
const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function seed(url: string, headers: Record<string, string>, entity: string, n: number, make: (i: number) => unknown): Promise<void> {
  for (let b = 0; b < n; b += 1000) {
    const items = Array.from({ length: Math.min(1000, n - b) }, (_, i) => make(b + i));
    expectStatus(`seed ${entity}`, await call('POST', `${url}/api/${entity}/batch`, headers, { items }), 201);
  }
}

/** Streams every row of StreamList once; samples the server's RSS meanwhile. */
function streamAll(port: number, md: grpc.Metadata, request: Buffer, pid: number): Promise<{ rows: number; seconds: number; serverCpuS: number; rssBeforeMiB: number; rssPeakMiB: number }> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const rssBeforeMiB = rssMiB(pid);
  const cpu0 = cpuSeconds(pid);
  let rssPeakMiB = rssBeforeMiB;
  const sampler = setInterval(() => {
    rssPeakMiB = Math.max(rssPeakMiB, rssMiB(pid));
  }, 25);
  const t0 = performance.now();
  return new Promise((res, rej) => {
    let rows = 0;
    const s = client.makeServerStreamRequest('/service.app.RowService/StreamList', (b: Buffer) => b, (b: Buffer) => b, request, md);
    s.on('data', () => rows++);
    s.on('error', (e) => rej(e));
    s.on('status', (st) => {
      clearInterval(sampler);
      client.close();
      if (st.code !== grpc.status.OK) return rej(new Error(`StreamList ended with ${st.code} ${st.details}`));
      res({ rows, seconds: (performance.now() - t0) / 1000, serverCpuS: cpuSeconds(pid) - cpu0, rssBeforeMiB, rssPeakMiB });
    });
  });
}

async function main(): Promise<void> {
  ensureWrk();
  const h2load = ensureH2load();
  let db: ScratchDatabase | null = null;
  if (cfg.databaseUrl !== null) db = await createScratchDatabase(cfg.databaseUrl);
  const adminToken = `bench-admin-${Math.random().toString(36).slice(2)}`;
  const grpcPort = await freePort('127.0.0.1');
  let server: ChildServer | null = null;
  try {
    server = await startNodeServer({
      name: 'plinth', script: join(ROOT, 'main.js'), cwd: ROOT, host: '127.0.0.1', verbose: false, startTimeoutMs: 60_000, unsetEnv: ['DATABASE_URL', 'NATS_URL'],
      ...(cfg.cpuProfileDir === null ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${cfg.cpuProfileDir}`] }),
      env: { SERVICE_ADMIN_TOKEN: adminToken, DATA_DIR: 'memory:', LOG_LEVEL: 'warn', GRPC_PORT: String(grpcPort), ...(db === null ? {} : { DATABASE_URL: db.url, DB_POOL_SIZE: '10' }) },
    });
    const url = server.url;
    const auth = { authorization: `Bearer ${adminToken}` };
    const slug = `grpcbench${Math.random().toString(36).slice(2, 8)}`;
    expectStatus('tenant', await call('POST', `${url}/api/TenantRecord`, auth, { slug, name: 'gRPC bench' }), 201);
    expectStatus('project', await call('POST', `${url}/api/projects/create`, auth, { tenant: slug, slug: 'bench', name: 'bench' }), 201);
    const headers = { ...auth, 'x-service-tenant': slug, 'x-service-project': 'bench' };
    expectStatus('Order', await call('POST', `${url}/api/Schema/entities`, headers, { entityName: 'Order', fields: ORDER_FIELDS }), 201);
    expectStatus('Row', await call('POST', `${url}/api/Schema/entities`, headers, { entityName: 'Row', fields: [{ name: 'n', type: 'Int', nullable: false }, { name: 'label', type: 'String', nullable: false }] }), 201);
    log(`seeding ${cfg.rows} orders and ${cfg.streamRows} stream rows (${db === null ? 'PGlite' : 'PostgreSQL'})`);
    await seed(url, headers, 'orders', cfg.rows, (i) => ({ customerName: `customer ${i}`, status: STATUSES[i % 4], total: `${i % 1000}.${i % 100}`, qty: i % 50 }));
    await seed(url, headers, 'rows', cfg.streamRows, (i) => ({ n: i, label: `row number ${i}` }));
    const ids: string[] = [];
    for (let cursor: string | undefined; ids.length < Math.min(cfg.rows, 2000);) {
      const page = await call('GET', `${url}/api/orders?pageSize=200${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, headers);
      const body = page.body as { data: Array<{ id: string }>; page: { next?: string } };
      ids.push(...body.data.map((r) => r.id));
      cursor = body.page.next;
      if (cursor === undefined) break;
    }
    const proto = (await call('GET', `${url}/grpc/proto/service-app.proto`, headers)).text;
    const root = new protobuf.Root();
    for (const f of ['google/protobuf/timestamp.proto', 'google/protobuf/struct.proto', 'google/protobuf/field_mask.proto']) root.addJSON(protobuf.common.get(f)!.nested!);
    protobuf.parse(proto, root, { keepCase: true });
    const enc = (type: string, v: object): string => Buffer.from(root.lookupType(`service.app.${type}`).encode(v).finish()).toString('base64');
    const filterOf = (s: string): string => JSON.stringify({ status: { eq: s } });

    const base = { headers: {}, concurrency: cfg.concurrency, channels: cfg.channels, warmupS: cfg.warmupS, durationS: cfg.durationS, path: '', paths: [], messages: [] };
    const grpcMd = { authorization: headers.authorization, 'x-service-tenant': slug, 'x-service-project': 'bench' };
    const getPaths = ids.map((id) => `/api/orders/${id}`);
    const listPaths = STATUSES.map((s) => `/api/orders?filter=${encodeURIComponent(filterOf(s))}&sort=-createdAt&pageSize=20`);
    const results: Record<string, { reqPerSec: number; p50Ms: number; p99Ms: number; errors: number }> = {};
    const dir = mkdtempSync(join(tmpdir(), 'plinth-grpc-bench-'));
    scratchDirs.push(dir);
    // ABBA order, so a drift of the machine's background load weighs the same on both protocols.
    const plan: Array<[string, () => Promise<{ reqPerSec: number; p50Ms: number; p99Ms: number; errors: number }>]> = [
      ['REST W1 (wrk)', () => runWrk(url, writeScript(dir, 'w1', { method: 'GET', paths: getPaths, headers }), { threads: 1, connections: cfg.concurrency, durationS: cfg.durationS })],
      ['REST W1 (node)', () => runLoad({ ...base, kind: 'http', target: url, paths: getPaths, headers })],
      ['gRPC Get', () => runLoad({ ...base, kind: 'grpc', target: `127.0.0.1:${grpcPort}`, path: '/service.app.OrderService/Get', messages: ids.map((id) => enc('GetOrderRequest', { id })), headers: grpcMd })],
      ['REST W2 (wrk)', () => runWrk(url, writeScript(dir, 'w2', { method: 'GET', paths: listPaths, headers }), { threads: 1, connections: cfg.concurrency, durationS: cfg.durationS })],
      ['REST W2 (node)', () => runLoad({ ...base, kind: 'http', target: url, paths: listPaths, headers })],
      ['gRPC List', () => runLoad({ ...base, kind: 'grpc', target: `127.0.0.1:${grpcPort}`, path: '/service.app.OrderService/List', messages: STATUSES.map((s) => enc('ListOrdersRequest', { page_size: 20, filter: filterOf(s), sort: '-createdAt' })), headers: grpcMd })],
    ];
    if (h2load) {
      // Native on both sides: wrk for REST, h2load for gRPC (one request message each: one id, one status).
      const h2 = (path: string, type: string, message: object) => () => runH2load(`http://127.0.0.1:${grpcPort}${path}`, writeGrpcBody(dir, type, Buffer.from(enc(type, message), 'base64')), grpcMd, {
        clients: Math.min(cfg.concurrency, cfg.h2Clients), streams: Math.max(1, Math.ceil(cfg.concurrency / Math.min(cfg.concurrency, cfg.h2Clients))), warmupS: cfg.warmupS, durationS: cfg.durationS,
      });
      plan.splice(3, 0, ['gRPC Get (h2load)', h2('/service.app.OrderService/Get', 'GetOrderRequest', { id: ids[0]! })]);
      plan.push(['gRPC List (h2load)', h2('/service.app.OrderService/List', 'ListOrdersRequest', { page_size: 20, filter: filterOf('paid'), sort: '-createdAt' })]);
    }
    for (const [name, run] of plan) {
      if (cfg.only !== null && !cfg.only.includes(name)) continue;
      const r = await run();
      results[name] = r;
      log(`${name.padEnd(18)} ${r.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  errors ${r.errors}`);
    }
    const ratio = (a: string, b: string): string => (results[a] === undefined || results[b] === undefined ? '-' : (results[a]!.reqPerSec / results[b]!.reqPerSec).toFixed(2));
    log(`gRPC Get / REST W1: ${ratio('gRPC Get', 'REST W1 (node)')}x (Node client both), ${ratio('gRPC Get', 'REST W1 (wrk)')}x (vs wrk)`);
    log(`gRPC List / REST W2: ${ratio('gRPC List', 'REST W2 (node)')}x (Node client both), ${ratio('gRPC List', 'REST W2 (wrk)')}x (vs wrk)`);
    log(`native clients (h2load / wrk): Get ${ratio('gRPC Get (h2load)', 'REST W1 (wrk)')}x, List ${ratio('gRPC List (h2load)', 'REST W2 (wrk)')}x`);

    if (cfg.only !== null && !cfg.only.includes('StreamList')) return;
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(grpcMd)) md.set(k, v);
    // The default order (createdAt, id) has its index, so each page is an index range, not a sort of the table.
    const streamReq = (limit: number | null): Buffer => Buffer.from(root.lookupType('service.app.ListRowsRequest').encode(limit === null ? {} : { filter: JSON.stringify({ n: { lt: limit } }) }).finish());
    const small = await streamAll(grpcPort, md, streamReq(Math.floor(cfg.streamRows / 10)), server.pid);
    const all = await streamAll(grpcPort, md, streamReq(null), server.pid);
    for (const [name, s] of [['StreamList 1/10', small], ['StreamList all', all]] as const) {
      log(`${name.padEnd(16)} ${s.rows} rows in ${s.seconds.toFixed(2)} s = ${(s.rows / s.seconds).toFixed(0)} rows/s (server CPU ${s.serverCpuS.toFixed(2)} s); server RSS ${s.rssBeforeMiB.toFixed(0)} → peak ${s.rssPeakMiB.toFixed(0)} MiB (+${(s.rssPeakMiB - s.rssBeforeMiB).toFixed(0)})`);
    }
    if (all.rows !== cfg.streamRows) throw new Error(`StreamList streamed ${all.rows} of ${cfg.streamRows} rows`);
    if (h2load) {
      // The same stream read by a native client: the grpc-js client above is the slower side of that pair.
      const dir = mkdtempSync(join(tmpdir(), 'plinth-grpc-stream-'));
      scratchDirs.push(dir);
      const pid = server.pid;
      const cpu0 = cpuSeconds(pid);
      const rss0 = rssMiB(pid);
      let peak = rss0;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssMiB(pid));
      }, 25);
      const seconds = await timeOneStream(`http://127.0.0.1:${grpcPort}/service.app.RowService/StreamList`, writeGrpcBody(dir, 'stream', streamReq(null)), grpcMd);
      clearInterval(sampler);
      log(`StreamList all (h2load) ${cfg.streamRows} rows in ${seconds.toFixed(2)} s = ${(cfg.streamRows / seconds).toFixed(0)} rows/s (server CPU ${(cpuSeconds(pid) - cpu0).toFixed(2)} s); server RSS ${rss0.toFixed(0)} → peak ${peak.toFixed(0)} MiB (+${(peak - rss0).toFixed(0)})`);
    }
  } finally {
    await server?.stop();
    await db?.drop();
    for (const d of scratchDirs) rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
