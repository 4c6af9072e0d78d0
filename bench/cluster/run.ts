/**
 * `npm run bench:cluster`: what cluster mode costs and buys on one machine.
 *
 *   1. throughput of point reads and creates through 1 node vs 2 nodes (same database,
 *      same NATS cluster; "2 nodes" = autocannon spreading its connections over both URLs),
 *      in ABBA order (1, 2, 2, 1) so a drifting background load cancels out;
 *   2. actor ask round-trip through the HTTP API (`PUT /api/TenantRecord/{id}`, one
 *      request at a time, so it is the Tenant actor's ask plus one UPDATE): single-node
 *      mode (in-process transport) vs cluster mode through each node (one of them owns
 *      the actor, the other reaches it over NATS request/reply);
 *   3. events per second through outbox → JetStream: time from the first of N creates
 *      until all N events are in the PLINTH_EVENTS stream.
 *
 * Prints a table and the ratios, writes bench/results/cluster-latest.json. See bench/cluster/README.md.
 */
import { cpus } from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { LEASE_BUCKET, leaseKey } from '../../cluster/leases.js';
import { bootstrapProject, seedItems, type Fixture } from '../bootstrap.js';
import { createScratchDatabase, type ScratchDatabase } from '../db.js';
import { CREATED_PREFIX, ENTITY_PATH, makeItem } from '../item-model.js';
import { NatsCluster, NATS_SERVER_BIN, natsServerAvailable } from '../../test/support/nats-cluster.js';
import { intEnv } from '../config.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../../test/support/plinth-process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');


const cfg = {
  durationS: intEnv('BENCH_DURATION_S', 6, 1),
  warmupS: intEnv('BENCH_WARMUP_S', 1, 0),
  connections: intEnv('BENCH_CONNECTIONS', 32, 2),
  seedRows: intEnv('BENCH_SEED_ROWS', 1000, 10),
  askSamples: intEnv('BENCH_ASK_SAMPLES', 300, 10),
  events: intEnv('BENCH_EVENTS', 2000, 10),
  poolSize: intEnv('BENCH_PG_POOL', 10, 1),
  maxMinutes: intEnv('BENCH_MAX_MINUTES', 10, 1),
  adminDatabaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  stream: process.env.PLINTH_EVENTS_STREAM ?? 'PLINTH_EVENTS',
  resultsFile: join(ROOT, 'bench', 'results', 'cluster-latest.json'),
  verbose: process.env.BENCH_VERBOSE === '1',
};

const adminToken = `bench-admin-${randomBytes(12).toString('hex')}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (msg: string): void => console.log(`[bench:cluster ${new Date().toISOString().slice(11, 19)}] ${msg}`);

const cleanups: Array<() => Promise<void>> = [];
async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (err) {
      console.error(`bench:cluster: cleanup failed: ${(err as Error).message}`);
    }
  }
}

// ------------------------------------------------------------------ measurements

interface Throughput {
  workload: 'read' | 'create';
  nodes: 1 | 2;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  total2xx: number;
  non2xx: number;
  errors: number;
  segments: number[];
}

interface Latency {
  label: string;
  /** Raw samples (ms), dropped from the JSON file. */
  raw?: number[];
  samples: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  failures: number;
}

function requestFor(workload: 'read' | 'create', fx: Fixture): AutocannonRequest {
  let n = Math.floor(Math.random() * 1_000_000);
  if (workload === 'read') {
    return {
      method: 'GET', path: `/api/${ENTITY_PATH}/${fx.ids[0]}`, headers: fx.headers,
      setupRequest: (req) => {
        req.path = `/api/${ENTITY_PATH}/${fx.ids[n++ % fx.ids.length]}`;
        return req;
      },
    };
  }
  const bodies = Array.from({ length: 64 }, (_, i) => JSON.stringify(makeItem(i, CREATED_PREFIX)));
  return {
    method: 'POST', path: `/api/${ENTITY_PATH}`, headers: { ...fx.headers, 'content-type': 'application/json' }, body: bodies[0],
    setupRequest: (req) => {
      req.body = bodies[n++ % bodies.length];
      return req;
    },
  };
}

function cannon(urls: string[], workload: 'read' | 'create', fx: Fixture, durationS: number): Promise<AutocannonResult> {
  // autocannon spreads connections round-robin over several URLs.
  return autocannon({ url: (urls.length === 1 ? urls[0] : urls) as string, connections: cfg.connections, duration: durationS, timeout: 10, requests: [requestFor(workload, fx)] });
}

async function throughput(nodes: PlinthProcess[], fx: Fixture): Promise<Throughput[]> {
  const out: Throughput[] = [];
  const segS = Math.max(1, cfg.durationS / 2);
  for (const workload of ['read', 'create'] as const) {
    const runs: Record<1 | 2, AutocannonResult[]> = { 1: [], 2: [] };
    for (const [k, count] of ([1, 2, 2, 1] as const).entries()) {
      const urls = nodes.slice(0, count).map((n) => n.url);
      if (k === 0 && cfg.warmupS > 0) await cannon(urls, workload, fx, cfg.warmupS);
      const r = await cannon(urls, workload, fx, segS);
      log(`${workload} via ${count} node(s), segment ${k + 1}/4: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}`);
      runs[count].push(r);
    }
    for (const count of [1, 2] as const) {
      const rs = runs[count];
      const mean = (f: (r: AutocannonResult) => number): number => rs.reduce((s, r) => s + f(r), 0) / rs.length;
      out.push({
        workload, nodes: count,
        reqPerSec: mean((r) => r.requests.average), p50Ms: mean((r) => r.latency.p50), p99Ms: mean((r) => r.latency.p99),
        total2xx: rs.reduce((s, r) => s + r['2xx'], 0), non2xx: rs.reduce((s, r) => s + r.non2xx, 0), errors: rs.reduce((s, r) => s + r.errors + r.timeouts, 0),
        segments: rs.map((r) => r.requests.average),
      });
    }
  }
  return out;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const WARMUP_ASKS = 10;

function mergeLatency(parts: Latency[]): Latency {
  const times = parts.flatMap((p) => p.raw ?? []).sort((a, b) => a - b);
  return { label: parts[0]!.label, samples: times.length, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), meanMs: times.reduce((s, t) => s + t, 0) / Math.max(1, times.length), failures: parts.reduce((s, p) => s + p.failures, 0) };
}

async function leaseOwner(nc: NatsConnection, key: string): Promise<string | null> {
  try {
    const e = await (await new Kvm(nc).open(LEASE_BUCKET)).get(key);
    if (e === null || e.operation !== 'PUT') return null;
    const v = JSON.parse(new TextDecoder().decode(e.value)) as { nodeId?: unknown };
    return typeof v.nodeId === 'string' ? v.nodeId : null;
  } catch {
    return null;
  }
}

/** Sequential `PUT /api/TenantRecord/{id}`: one Tenant actor ask (+ one UPDATE) per request. */
async function askLatency(label: string, url: string, tenantId: string, samples: number): Promise<Latency> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const times: number[] = [];
  let failures = 0;
  for (let i = 0; i < samples + WARMUP_ASKS; i++) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${url}/api/TenantRecord/${tenantId}`, { method: 'PUT', headers, body: JSON.stringify({ name: `bench ${i}` }), signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.status !== 200) failures++;
    else if (i >= WARMUP_ASKS) times.push(ms); // the first ones warm up (activation, connections, JIT)
  }
  times.sort((a, b) => a - b);
  return { label, raw: times, samples: times.length, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), meanMs: times.reduce((s, t) => s + t, 0) / Math.max(1, times.length), failures };
}

async function createTenant(url: string): Promise<string> {
  const res = await fetch(`${url}/api/TenantRecord`, {
    method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ slug: `ask-${randomBytes(4).toString('hex')}`, name: 'Ask bench' }), signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`create tenant: ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { data: { id: string } }).data.id;
}

async function streamMessages(nc: NatsConnection): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5_000 });
      return (await jsm.streams.info(cfg.stream)).state.messages;
    } catch (err) {
      if (attempt >= 20) throw err;
      await sleep(250);
    }
  }
}

interface EventsRate {
  creates: number;
  createFailures: number;
  createSeconds: number;
  allInStreamSeconds: number;
  eventsPerSec: number;
  lagAfterLastCreateMs: number;
}

/**
 * N creates as fast as autocannon sends them, spread over both nodes; events/s = N ÷ (time
 * from the first create until all N events are in the stream). When the lag after the last
 * create is small, the outbox kept up and the number is bound by the create rate.
 */
async function eventsRate(nc: NatsConnection, nodes: PlinthProcess[], fx: Fixture): Promise<EventsRate> {
  const before = await streamMessages(nc);
  const t0 = Date.now();
  const r = await autocannon({
    url: nodes.map((n) => n.url) as unknown as string, connections: cfg.connections, amount: cfg.events, timeout: 30,
    requests: [requestFor('create', fx)],
  });
  const createdAt = Date.now();
  const ok = r['2xx'];
  const failures = cfg.events - ok;
  const want = before + ok;
  const deadline = Date.now() + 120_000;
  let have = await streamMessages(nc);
  while (have < want && Date.now() < deadline) {
    await sleep(20);
    have = await streamMessages(nc);
  }
  if (have < want) throw new Error(`only ${have - before} of ${ok} events reached ${cfg.stream} within 120 s after the last create`);
  const doneAt = Date.now();
  return { creates: ok, createFailures: failures, createSeconds: (createdAt - t0) / 1000, allInStreamSeconds: (doneAt - t0) / 1000, eventsPerSec: ok / ((doneAt - t0) / 1000), lagAfterLastCreateMs: doneAt - createdAt };
}

// ------------------------------------------------------------------ orchestration

async function startCluster(db: ScratchDatabase, natsUrl: string): Promise<PlinthProcess[]> {
  const common = { databaseUrl: db.url, natsUrl, adminToken, echo: cfg.verbose, env: { DB_POOL_SIZE: String(cfg.poolSize), GRPC_PORT: '0' } };
  const nodes = await Promise.all([startPlinthProcess({ ...common, nodeId: 'bench-1' }), startPlinthProcess({ ...common, nodeId: 'bench-2' })]);
  for (const n of nodes) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await fetch(`${n.url}/api/health/ready`).catch(() => null);
      if (r?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${n.nodeId} not ready in 30 s (last ${r?.status ?? 'no answer'}):\n${n.output().slice(-3000)}`);
      await sleep(200);
    }
  }
  return nodes;
}

const fmt = (n: number, d = 0): string => (Number.isFinite(n) ? n.toFixed(d) : '-');
const pad = (s: string, w: number): string => (s.length >= w ? s : s + ' '.repeat(w - s.length));
const padL = (s: string, w: number): string => (s.length >= w ? s : ' '.repeat(w - s.length) + s);

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? pad(c, widths[i]!) : padL(c, widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  if (!natsServerAvailable()) {
    console.error(`bench:cluster needs nats-server (not found at ${NATS_SERVER_BIN}): apt-get install nats-server, or set NATS_SERVER_BIN`);
    return 1;
  }
  const startedAt = new Date();
  const watchdog = setTimeout(() => {
    console.error(`bench:cluster: exceeded BENCH_MAX_MINUTES=${cfg.maxMinutes}; killing children`);
    void reapPlinthProcesses().then(cleanupAll).finally(() => process.exit(2));
  }, cfg.maxMinutes * 60_000);
  watchdog.unref();
  const abort = (sig: string): void => {
    console.error(`bench:cluster: ${sig}; cleaning up`);
    void reapPlinthProcesses().then(cleanupAll).finally(() => process.exit(130));
  };
  process.once('SIGINT', () => abort('SIGINT'));
  process.once('SIGTERM', () => abort('SIGTERM'));
  cleanups.push(reapPlinthProcesses);
  log(`${cfg.durationS} s per workload and node count (ABBA, 4 segments), ${cfg.connections} connections, ${cfg.seedRows} seed rows, ${cfg.askSamples} ask samples, ${cfg.events} events`);

  const notes: string[] = [];
  // 1. Single-node mode (in-process actor transport) on its own database: the ask baseline.
  //    It keeps running (idle) while the cluster is measured, so the ask rows can interleave.
  const db1 = await createScratchDatabase(cfg.adminDatabaseUrl);
  cleanups.push(db1.drop);
  const single = await startPlinthProcess({ databaseUrl: db1.url, adminToken, nodeId: 'bench-single', echo: cfg.verbose, env: { DB_POOL_SIZE: String(cfg.poolSize), GRPC_PORT: '0' } });
  cleanups.push(async () => void (await single.terminate()));
  const singleTenant = await createTenant(single.url);

  // 2. Cluster mode: 3 NATS servers, 2 Plinth nodes, one database.
  const nats = await NatsCluster.start(3);
  cleanups.push(() => nats.stop());
  const db2 = await createScratchDatabase(cfg.adminDatabaseUrl);
  cleanups.push(db2.drop);
  const nodes = await startCluster(db2, nats.natsUrl);
  log(`cluster: ${nodes.map((n) => `${n.nodeId} ${n.url}`).join(', ')}; NATS ${nats.natsUrl}`);
  const nc = await connect({ servers: nats.urls, maxReconnectAttempts: -1, name: 'bench-cluster' });
  cleanups.push(() => nc.close());

  const project = await bootstrapProject(nodes[0]!.url, adminToken);
  const t0 = Date.now();
  const ids = await seedItems(nodes[0]!.url, project.headers, cfg.seedRows, 16);
  log(`seeded ${ids.length} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const fx: Fixture = { ...project, ids };
  // The second node must serve the entity before it is measured (publication propagation).
  for (const n of nodes) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await fetch(`${n.url}/api/${ENTITY_PATH}/${ids[0]}`, { headers: fx.headers });
      await r.arrayBuffer();
      if (r.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${n.nodeId} does not serve /api/${ENTITY_PATH} (${r.status})`);
      await sleep(50);
    }
  }

  // Ask rows in ABCCBA order (single, owner, other, other, owner, single); each row is the mean of its two halves.
  const clusterTenant = await createTenant(nodes[0]!.url);
  await askLatency('warm-up', nodes[1]!.url, clusterTenant, 20);
  const owner = await leaseOwner(nc, leaseKey({ kind: 'tenant', key: clusterTenant }));
  const ownerNode = nodes.find((n) => n.nodeId === owner) ?? nodes[0]!;
  const otherNode = nodes.find((n) => n !== ownerNode)!;
  const half = Math.max(5, Math.floor(cfg.askSamples / 2));
  const order: Array<[string, string, string]> = [
    ['single node, in-process transport', single.url, singleTenant],
    [`cluster, via the actor's owner ${ownerNode.nodeId}`, ownerNode.url, clusterTenant],
    [`cluster, via ${otherNode.nodeId} (ask over NATS)`, otherNode.url, clusterTenant],
  ];
  const halves = new Map<string, Latency[]>();
  for (const [label, url, tenantId] of [...order, ...[...order].reverse()]) {
    const l = await askLatency(label, url, tenantId, half);
    halves.set(label, [...(halves.get(label) ?? []), l]);
  }
  const merged = order.map(([label]) => mergeLatency(halves.get(label)!));
  const [askSingle, askOwner, askRemote] = merged as [Latency, Latency, Latency];
  for (const a of merged) log(`ask ${a.label}: p50 ${fmt(a.p50Ms, 2)} ms, p99 ${fmt(a.p99Ms, 2)} ms`);
  notes.push(`Ask = PUT /api/TenantRecord/{id} one at a time: HTTP + auth + Tenant actor ask + one UPDATE. The tenant's actor is leased to ${ownerNode.nodeId} (read from the lease bucket${owner === null ? ': not found, assumed' : ''}); through ${otherNode.nodeId} the ask crosses NATS. Rows measured in ABCCBA order.`);

  const tp = await throughput(nodes, fx);
  const ev = await eventsRate(nc, nodes, fx);
  log(`events: ${ev.creates} creates in ${fmt(ev.createSeconds, 1)} s, all in ${cfg.stream} after ${fmt(ev.allInStreamSeconds, 1)} s → ${fmt(ev.eventsPerSec)} events/s (lag after the last create ${ev.lagAfterLastCreateMs} ms)`);

  // ---- report
  const get = (w: 'read' | 'create', n: 1 | 2): Throughput => tp.find((t) => t.workload === w && t.nodes === n)!;
  const rows = tp.map((t) => [`${t.workload === 'read' ? 'point read' : 'create'}, ${t.nodes} node${t.nodes === 2 ? 's' : ''}`, fmt(t.reqPerSec), fmt(t.p50Ms, 1), fmt(t.p99Ms, 1), String(t.non2xx), String(t.errors)]);
  console.log(`\nThroughput (same database, same NATS cluster; ${cfg.connections} connections; ${cpus().length} cores shared by load generator, nodes, NATS and PostgreSQL)`);
  console.log(table(['workload', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'], rows));
  const ratios = {
    read2vs1: get('read', 2).reqPerSec / get('read', 1).reqPerSec,
    create2vs1: get('create', 2).reqPerSec / get('create', 1).reqPerSec,
    askOverNatsVsInProcessP50: askRemote.p50Ms / askSingle.p50Ms,
    askOwnerVsInProcessP50: askOwner.p50Ms / askSingle.p50Ms,
    askOverNatsExtraP50Ms: askRemote.p50Ms - askOwner.p50Ms,
  };
  console.log(`ratio 2 nodes / 1 node: point read ${fmt(ratios.read2vs1, 2)}, create ${fmt(ratios.create2vs1, 2)}`);
  console.log('\nActor ask round-trip through the HTTP API (sequential PUT /api/TenantRecord/{id})');
  console.log(table(['path', 'samples', 'p50 ms', 'p99 ms', 'mean ms', 'failures'], merged.map((a) => [a.label, String(a.samples), fmt(a.p50Ms, 2), fmt(a.p99Ms, 2), fmt(a.meanMs, 2), String(a.failures)])));
  console.log(`ratio p50 / in-process: via the owner ${fmt(ratios.askOwnerVsInProcessP50, 2)}, over NATS ${fmt(ratios.askOverNatsVsInProcessP50, 2)} (the NATS hop adds ${fmt(ratios.askOverNatsExtraP50Ms, 2)} ms at p50)`);
  console.log(`\nEvents through outbox → JetStream (${cfg.stream}): ${ev.creates} creates over 2 nodes in ${fmt(ev.createSeconds, 2)} s; all events in the stream after ${fmt(ev.allInStreamSeconds, 2)} s → ${fmt(ev.eventsPerSec)} events/s (lag after the last create: ${ev.lagAfterLastCreateMs} ms, create failures ${ev.createFailures})`);

  const doc = {
    startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(),
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model },
    settings: { ...cfg, resultsFile: undefined },
    throughput: tp, ask: { inProcess: askSingle, owner: askOwner, overNats: askRemote }, events: ev, ratios, notes,
  };
  await mkdir(dirname(cfg.resultsFile), { recursive: true });
  await writeFile(cfg.resultsFile, JSON.stringify(doc, null, 2) + '\n');
  log(`results written to ${cfg.resultsFile}`);
  const bad = tp.some((t) => t.non2xx > t.total2xx / 100) || merged.some((a) => a.failures > 0) || ev.createFailures > 0;
  if (bad) console.log('\nSome requests failed (non-2xx above 1 % or failed asks/creates): treat these numbers with suspicion.');
  return bad ? 1 : 0;
}

main()
  .then(async (code) => {
    await cleanupAll();
    process.exit(code);
  })
  .catch(async (err: unknown) => {
    console.error(`bench:cluster: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await reapPlinthProcesses();
    await cleanupAll();
    process.exit(1);
  });
