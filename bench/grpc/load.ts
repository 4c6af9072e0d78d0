/**
 * Load generator for the gRPC bench, run in its own process (so its CPU is
 * not the server's): keeps `concurrency` calls in flight for a warm-up, then
 * for the measured duration, and prints one `LOADJSON {…}` line. Requests
 * are pre-encoded and answers are not decoded, on both protocols, so the
 * client spends as little as a Node client can. Config comes as JSON in argv[2].
 */
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';

export interface LoadConfig {
  kind: 'grpc' | 'http';
  /** gRPC: `127.0.0.1:port`; HTTP: `http://127.0.0.1:port`. */
  target: string;
  /** gRPC method path, or HTTP paths to rotate over. */
  path: string;
  paths: string[];
  /** gRPC: pre-encoded request messages (base64) to rotate over. */
  messages: string[];
  headers: Record<string, string>;
  concurrency: number;
  channels: number;
  warmupS: number;
  durationS: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  durationS: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

const identity = (b: Buffer): Buffer => b;

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2]!) as LoadConfig;
  let measuring = false;
  let stopped = false;
  let requests = 0;
  let errors = 0;
  const latencies: number[] = [];
  let n = 0;
  let one: () => Promise<boolean>;
  if (cfg.kind === 'grpc') {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(cfg.headers)) md.set(k, v);
    const messages = cfg.messages.map((m) => Buffer.from(m, 'base64'));
    // Distinct channel options give distinct HTTP/2 connections.
    const clients = Array.from({ length: cfg.channels }, (_, i) => new grpc.Client(cfg.target, grpc.credentials.createInsecure(), { 'grpc.channel_index': i } as grpc.ChannelOptions));
    one = () => new Promise((resolve) => {
      const i = n++;
      clients[i % clients.length]!.makeUnaryRequest(cfg.path, identity, identity, messages[i % messages.length]!, md, (err) => resolve(err === null));
    });
  } else {
    const agent = new http.Agent({ keepAlive: true, maxSockets: cfg.concurrency });
    const url = new URL(cfg.target);
    one = () => new Promise((resolve) => {
      const path = cfg.paths[n++ % cfg.paths.length]!;
      const req = http.request({ host: url.hostname, port: url.port, path, method: 'GET', agent, headers: cfg.headers }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
      req.end();
    });
  }
  const worker = async (): Promise<void> => {
    while (!stopped) {
      const t0 = performance.now();
      const ok = await one();
      if (!measuring) continue;
      requests++;
      if (!ok) errors++;
      latencies.push(performance.now() - t0);
    }
  };
  const workers = Array.from({ length: cfg.concurrency }, () => worker());
  await new Promise((r) => setTimeout(r, cfg.warmupS * 1000));
  measuring = true;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, cfg.durationS * 1000));
  measuring = false;
  const durationS = (performance.now() - t0) / 1000;
  stopped = true;
  await Promise.all(workers);
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  const result: LoadResult = { requests, errors, durationS, reqPerSec: requests / durationS, p50Ms: pct(0.5), p99Ms: pct(0.99) };
  process.stdout.write(`LOADJSON ${JSON.stringify(result)}\n`);
  process.exit(0);
}

void main();
