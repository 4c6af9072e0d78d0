import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, startServer, type TestServer } from './server.js';
import { findNatsServer } from './services.js';

/** NATS_SERVER_BIN, else on PATH, else Debian's /usr/sbin/nats-server (test/support/services.ts). */
export const NATS_SERVER_BIN = findNatsServer() ?? '/usr/sbin/nats-server';
export const natsServerAvailable = (): boolean => existsSync(NATS_SERVER_BIN);

/** A child killed by a signal has exitCode null and signalCode set: it is not running either. */
const running = (p: ChildProcess): boolean => p.exitCode === null && p.signalCode === null;

/** A free TCP port on loopback (bind :0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

interface ServerSlot {
  name: string;
  clientPort: number;
  clusterPort: number;
  monitorPort: number;
  storeDir: string;
  conf: string;
  proc: ChildProcess | null;
}

/**
 * A real NATS cluster with JetStream on loopback ports, for tests and
 * `npm run cluster`. Servers can be killed (-9) and restarted on the same
 * ports and store directories, like a crashed machine coming back.
 */
export class NatsCluster {
  private constructor(readonly dir: string, private readonly slots: ServerSlot[]) {}

  static async start(size = 3, opts: { dir?: string } = {}): Promise<NatsCluster> {
    if (!natsServerAvailable()) throw new Error(`nats-server not found at ${NATS_SERVER_BIN} (apt-get install nats-server)`);
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'plinth-nats-'));
    const slots: ServerSlot[] = [];
    for (let i = 1; i <= size; i++) {
      slots.push({ name: `n${i}`, clientPort: await freePort(), clusterPort: await freePort(), monitorPort: await freePort(), storeDir: join(dir, `store${i}`), conf: join(dir, `n${i}.conf`), proc: null });
    }
    const routes = slots.map((s) => `nats-route://127.0.0.1:${s.clusterPort}`).join(', ');
    for (const s of slots) {
      const cluster = size > 1 ? `cluster { name: plinth-test, listen: 127.0.0.1:${s.clusterPort}, routes: [ ${routes} ] }` : '';
      writeFileSync(s.conf, `server_name: ${s.name}\nlisten: 127.0.0.1:${s.clientPort}\nhttp: 127.0.0.1:${s.monitorPort}\njetstream { store_dir: "${s.storeDir}", max_memory_store: 128MB, max_file_store: 512MB }\n${cluster}\n`);
    }
    const cluster = new NatsCluster(dir, slots);
    for (let i = 0; i < size; i++) cluster.startServer(i);
    await cluster.waitReady();
    return cluster;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Client URLs of every server, for NATS_URL. */
  get urls(): string[] {
    return this.slots.map((s) => `nats://127.0.0.1:${s.clientPort}`);
  }

  get natsUrl(): string {
    return this.urls.join(',');
  }

  startServer(i: number): void {
    const s = this.slots[i]!;
    if (s.proc !== null && running(s.proc)) return;
    s.proc = spawn(NATS_SERVER_BIN, ['-c', s.conf], { stdio: 'ignore' });
  }

  /** Whether server i is running. */
  isRunning(i: number): boolean {
    const p = this.slots[i]!.proc;
    return p !== null && running(p);
  }

  /** The monitoring port (`http:`) of server i: /jsz, /varz, /healthz. */
  monitorPort(i: number): number {
    return this.slots[i]!.monitorPort;
  }

  /**
   * Index of the server leading the JetStream meta group, as a running
   * server's /jsz reports it, or null while there is none (an election).
   */
  async metaLeader(): Promise<number | null> {
    for (let i = 0; i < this.slots.length; i++) {
      if (!this.isRunning(i)) continue;
      try {
        const res = await fetch(`http://127.0.0.1:${this.slots[i]!.monitorPort}/jsz`, { signal: AbortSignal.timeout(3_000) });
        const j = (await res.json()) as { meta_cluster?: { leader?: string } };
        const at = this.slots.findIndex((s) => s.name === j.meta_cluster?.leader);
        if (at >= 0) return at;
      } catch {
        // this server does not answer: ask the next one
      }
    }
    return null;
  }

  /** SIGKILL: no goodbye to the cluster, as in a crash. */
  async kill(i: number): Promise<void> {
    const p = this.slots[i]!.proc;
    if (p === null || !running(p)) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  /** Waits until every running server reports JetStream with a meta leader (bounded). */
  async waitReady(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(this.slots.map(async (s) => {
        if (s.proc === null || !running(s.proc)) return true;
        try {
          const res = await fetch(`http://127.0.0.1:${s.monitorPort}/jsz`);
          if (!res.ok) return false;
          const j = (await res.json()) as { meta_cluster?: { leader?: string } };
          return this.slots.length === 1 || (j.meta_cluster?.leader ?? '') !== '';
        } catch {
          return false;
        }
      }));
      if (states.every(Boolean)) return;
      if (Date.now() > deadline) throw new Error('NATS cluster not ready in time');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /**
   * Waits until every running server answers `/healthz` with 200: JetStream is current
   * with the meta group and with every stream and KV bucket replica it holds. A server
   * restarted a moment ago can report a meta leader while its replicas still catch up;
   * killing another server then would leave those groups without a quorum.
   *
   * nats-server 2.9.10 now and then leaves JetStream unhealthy for good after its meta
   * leader was killed (ENVIRONMENT.md: JetStream traps; seen as "jetstream is not enabled"
   * on every node). Each bounce goes further: the unhealthy servers restarted, then every
   * server restarted one at a time, then the whole cluster stopped and started cold, which
   * rebuilds the meta group from the stores on disk.
   */
  async waitHealthy(timeoutMs = 30_000, bounces = 3): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(this.slots.map(async (s) => {
        if (s.proc === null || !running(s.proc)) return true;
        try {
          const res = await fetch(`http://127.0.0.1:${s.monitorPort}/healthz`, { signal: AbortSignal.timeout(3_000) });
          await res.arrayBuffer();
          return res.ok;
        } catch {
          return false;
        }
      }));
      if (states.every(Boolean)) return;
      if (Date.now() > deadline) {
        if (bounces <= 0) throw new Error('NATS cluster not healthy in time');
        const live = this.slots.map((s, i) => (s.proc !== null && running(s.proc) ? i : -1)).filter((i) => i >= 0);
        if (bounces === 1) {
          // Cold: every live server down, then all up together.
          for (const i of live) await this.kill(i);
          for (const i of live) this.startServer(i);
        } else {
          for (const i of live) {
            if (states[i] && bounces > 2) continue;
            await this.kill(i);
            this.startServer(i);
            if (bounces === 2) await this.waitReady();
          }
        }
        await this.waitReady(60_000);
        return this.waitHealthy(timeoutMs, bounces - 1);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async stop(): Promise<void> {
    for (let i = 0; i < this.slots.length; i++) await this.kill(i);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Plinth nodes in this process on one single-server NATS and one fresh PostgreSQL database, sharing an admin token. */
export interface NodesOnNats {
  nodes: TestServer[];
  token: string;
  stop(): Promise<void>;
}

/**
 * Starts one in-process node per id, all on one NATS server and one new
 * database, and waits (bounded) until they see each other in the membership:
 * a change that waits for confirmations must count every node. `env` adds
 * configuration (e.g. shorter leases) to every node; `natsUrlFor` may route
 * a node through something else (a fault proxy, test/support/nats-proxy.ts).
 */
export async function startNodesOnNats(ids: readonly string[], opts: { env?: Record<string, string>; natsUrlFor?: (id: string, natsUrl: string) => Promise<string> } = {}): Promise<NodesOnNats> {
  const nats = await NatsCluster.start(1);
  const db = await createTestDatabase();
  const token = `test-admin-${randomUUID()}`;
  const nodes: TestServer[] = [];
  const stop = async (): Promise<void> => {
    for (const n of nodes) await n.stop();
    await nats.stop();
    await db.drop();
  };
  try {
    for (const id of ids) {
      const natsUrl = opts.natsUrlFor === undefined ? nats.natsUrl : await opts.natsUrlFor(id, nats.natsUrl);
      nodes.push(await startServer({ backend: 'postgres', reuse: { dataDir: 'memory:', databaseUrl: db.url }, env: { ...opts.env, NATS_URL: natsUrl, NODE_ID: id, SERVICE_ADMIN_TOKEN: token } }));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const deadline = Date.now() + 10_000;
  while ((await nodes[0]!.node.services.node.members()).length < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return { nodes, token, stop };
}
