/**
 * `npm run cluster`: a local Plinth cluster on loopback.
 *
 *   - 3 nats-server processes forming one JetStream cluster (client ports 4322-4324,
 *     or free ones when those are taken), data under ./.cluster/nats/
 *   - 2 Plinth nodes (`node dist/main.js`) on ports 8081 and 8082, both on DATABASE_URL
 *     and on the NATS cluster
 *
 * Prints the node URLs, the admin token and the NATS_URL; Ctrl-C stops everything
 * (Plinth nodes first, with SIGTERM so they drain, then the NATS servers).
 *
 * Settings (environment): DATABASE_URL (required), SERVICE_ADMIN_TOKEN (default: generated
 * once and kept in ./.cluster/admin-token), CLUSTER_DIR (default ./.cluster),
 * CLUSTER_HTTP_PORTS (default 8081,8082), LOG_LEVEL (default info), NATS_SERVER_BIN.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { startPlinthProcess, type PlinthProcess } from '../test/support/plinth-process.js';

const HOST = '127.0.0.1';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const say = (msg: string): void => void process.stdout.write(`[cluster] ${msg}\n`);
const fail = (msg: string): never => {
  process.stderr.write(`${msg}\n`);
  process.exit(1);
};

function findNatsServer(): string | null {
  const env = process.env.NATS_SERVER_BIN;
  if (env !== undefined && env !== '') return existsSync(env) ? env : null;
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/bin']) {
    if (dir === '') continue;
    const p = join(dir, 'nats-server');
    if (existsSync(p)) return p;
  }
  return null;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(false));
    srv.listen(port, HOST, () => srv.close(() => res(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', rej);
    srv.listen(0, HOST, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/** The preferred port when it is free, else any free one. */
async function pickPort(preferred: number, taken: Set<number>): Promise<number> {
  let port = !taken.has(preferred) && (await portFree(preferred)) ? preferred : await freePort();
  while (taken.has(port)) port = await freePort();
  taken.add(port);
  return port;
}

interface NatsServer {
  name: string;
  client: number;
  route: number;
  monitor: number;
  proc: ChildProcess | null;
  log: string;
}

function exited(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', () => r()));
}

async function main(): Promise<void> {
  const natsBin = findNatsServer();
  if (natsBin === null) {
    fail(
      'npm run cluster needs nats-server (NATS with JetStream), which is not installed.\n' +
        'Install it with one of:\n' +
        '  sudo apt-get install nats-server          # Debian/Ubuntu (2.9+ works)\n' +
        '  brew install nats-server                  # macOS\n' +
        '  the official binary: https://github.com/nats-io/nats-server/releases (put it on PATH)\n' +
        'or point NATS_SERVER_BIN at the binary.',
    );
  }
  const databaseUrl = process.env.DATABASE_URL ?? '';
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
    fail(
      'npm run cluster needs DATABASE_URL: every node of a cluster shares one PostgreSQL (or CockroachDB) database.\n' +
        'For example:\n' +
        "  sudo -u postgres psql -c \"CREATE ROLE plinth LOGIN PASSWORD 'plinth'\" -c 'CREATE DATABASE plinth OWNER plinth'\n" +
        '  DATABASE_URL=postgres://plinth:plinth@127.0.0.1:5432/plinth npm run cluster',
    );
  }
  const mainJs = resolve('dist/main.js');
  if (!existsSync(mainJs)) fail('dist/main.js is missing: run npm run build first (npm run cluster does it for you).');

  const dir = resolve(process.env.CLUSTER_DIR ?? '.cluster');
  mkdirSync(join(dir, 'nats'), { recursive: true });
  let adminToken = process.env.SERVICE_ADMIN_TOKEN ?? '';
  const tokenFile = join(dir, 'admin-token');
  if (adminToken === '') {
    if (existsSync(tokenFile)) adminToken = readFileSync(tokenFile, 'utf8').trim();
    else {
      adminToken = randomBytes(24).toString('base64url');
      writeFileSync(tokenFile, `${adminToken}\n`, { mode: 0o600 });
      chmodSync(tokenFile, 0o600);
    }
  }
  const httpPorts = (process.env.CLUSTER_HTTP_PORTS ?? '8081,8082').split(',').map((s) => Number(s.trim()));
  if (httpPorts.length < 1 || httpPorts.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) fail('CLUSTER_HTTP_PORTS must be a comma-separated list of ports, e.g. 8081,8082');
  for (const p of httpPorts) if (!(await portFree(p))) fail(`port ${p} is in use; stop whatever holds it or set CLUSTER_HTTP_PORTS`);

  // ---- NATS: 3 servers, one JetStream cluster, fixed names so the stores survive restarts.
  const taken = new Set<number>(httpPorts);
  const servers: NatsServer[] = [];
  for (let i = 1; i <= 3; i++) {
    servers.push({ name: `n${i}`, client: await pickPort(4321 + i, taken), route: await pickPort(6321 + i, taken), monitor: await pickPort(8321 + i, taken), proc: null, log: '' });
  }
  const routes = servers.map((s) => `nats-route://${HOST}:${s.route}`).join(', ');
  for (const s of servers) {
    const store = join(dir, 'nats', `store-${s.name}`);
    mkdirSync(store, { recursive: true });
    writeFileSync(
      join(dir, 'nats', `${s.name}.conf`),
      `server_name: ${s.name}\nlisten: ${HOST}:${s.client}\nhttp: ${HOST}:${s.monitor}\n` +
        `jetstream { store_dir: "${store}", max_memory_store: 256MB, max_file_store: 2GB }\n` +
        `cluster { name: plinth-local, listen: ${HOST}:${s.route}, routes: [ ${routes} ] }\n`,
    );
  }

  const nodes: PlinthProcess[] = [];
  let stopping = false;
  const stopAll = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping Plinth nodes (drain), then NATS`);
    // One after another, last started first: each drains and hands its actors (the outbox
    // singleton among them) to a node that is still up.
    for (const n of [...nodes].reverse()) {
      const code = await n.terminate(20_000);
      say(`${n.nodeId} exited with ${code ?? 'SIGKILL after 20 s'}`);
    }
    for (const s of servers) if (s.proc !== null && s.proc.exitCode === null) s.proc.kill('SIGTERM');
    await Promise.race([Promise.all(servers.map((s) => (s.proc === null ? Promise.resolve() : exited(s.proc)))), sleep(10_000)]);
    for (const s of servers) if (s.proc !== null && s.proc.exitCode === null) s.proc.kill('SIGKILL');
    say('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => {
    if (stopping) {
      // Second Ctrl-C: no more waiting.
      for (const n of nodes) void n.kill9();
      for (const s of servers) s.proc?.kill('SIGKILL');
      process.exit(130);
    }
    void stopAll('SIGINT');
  });
  process.on('SIGTERM', () => void stopAll('SIGTERM'));
  process.on('exit', () => {
    for (const s of servers) if (s.proc !== null && s.proc.exitCode === null) s.proc.kill('SIGKILL');
  });

  for (const s of servers) {
    const proc = spawn(natsBin!, ['-c', join(dir, 'nats', `${s.name}.conf`)], { stdio: ['ignore', 'pipe', 'pipe'] });
    s.proc = proc;
    const keep = (b: Buffer): void => {
      s.log = (s.log + b.toString()).slice(-20_000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    proc.once('exit', (code, sig) => {
      if (!stopping) say(`nats-server ${s.name} exited (${code ?? sig}); last output:\n${s.log.slice(-2000)}`);
    });
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await Promise.all(servers.map(async (s) => {
      try {
        const j = (await (await fetch(`http://${HOST}:${s.monitor}/jsz`, { signal: AbortSignal.timeout(2_000) })).json()) as { meta_cluster?: { leader?: string } };
        return (j.meta_cluster?.leader ?? '') !== '';
      } catch {
        return false;
      }
    }));
    if (ok.every(Boolean)) break;
    if (servers.some((s) => s.proc!.exitCode !== null)) fail(`a nats-server failed to start:\n${servers.map((s) => `--- ${s.name}\n${s.log.slice(-2000)}`).join('\n')}`);
    if (Date.now() > deadline) fail(`the NATS cluster did not elect a JetStream leader within 30 s:\n${servers.map((s) => `--- ${s.name}\n${s.log.slice(-2000)}`).join('\n')}`);
    await sleep(250);
  }
  const natsUrl = servers.map((s) => `nats://${HOST}:${s.client}`).join(',');
  say(`NATS cluster up: ${natsUrl} (monitoring ${servers.map((s) => `http://${HOST}:${s.monitor}`).join(' ')})`);

  // ---- Plinth nodes, started one after the other (the first one migrates the database).
  const logLevel = process.env.LOG_LEVEL ?? 'info';
  for (const [i, port] of httpPorts.entries()) {
    const nodeId = `node-${i + 1}`;
    try {
      const n = await startPlinthProcess({
        databaseUrl, natsUrl, adminToken, nodeId, port, logLevel, echo: true,
        env: { GRPC_PORT: String(50051 + i), ...(process.env.DB_POOL_SIZE === undefined ? {} : { DB_POOL_SIZE: process.env.DB_POOL_SIZE }) },
      });
      nodes.push(n);
      void n.exited.then((code) => {
        if (!stopping) say(`${nodeId} exited unexpectedly (code ${code}); the other nodes keep serving`);
      });
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      await stopAll('start failure');
      return;
    }
  }

  const lines = [
    '',
    'Plinth cluster is running on loopback:',
    ...nodes.map((n, i) => `  ${n.nodeId}: ${n.url}   (gRPC ${50051 + i})`),
    `  NATS_URL=${natsUrl}`,
    `  DATABASE_URL=${databaseUrl.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}`,
    `  Admin token: ${adminToken}${process.env.SERVICE_ADMIN_TOKEN ? '' : `   (kept in ${tokenFile})`}`,
    '',
    'Try:',
    `  curl -s ${nodes[0]?.url}/api/health/ready`,
    `  curl -s -H "Authorization: Bearer ${adminToken}" -H 'content-type: application/json' -d '{"slug":"acme","name":"Acme"}' ${nodes[0]?.url}/api/TenantRecord`,
    '',
    'Ctrl-C stops everything (JetStream data stays in ' + join(dir, 'nats') + ').',
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`npm run cluster: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
