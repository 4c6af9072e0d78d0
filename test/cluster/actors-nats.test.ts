import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { ActorId, ActorSystem, defineActor } from '../../actors/index.js';
import { InProcessTransport } from '../../cluster/in-process-transport.js';
import { LEASE_BUCKET, PlacementLeases } from '../../cluster/leases.js';
import { connectCluster, type ClusterConnection } from '../../cluster/nats-connection.js';
import { NatsActorTransport } from '../../cluster/nats-transport.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { Logger } from '../../runtime/log.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { servicesSkip } from '../support/services.js';

const TTL_MS = 6_000; // the default, so the failover figures printed here are the real ones

type LogRecord = { level: string; msg: string; fields: Record<string, unknown> };

function captureLogger(records: LogRecord[], base: Record<string, unknown> = {}): Logger {
  const put = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    records.push({ level, msg, fields: { ...base, ...fields } });
  };
  return { info: put('info'), warn: put('warn'), error: put('error'), child: (f) => captureLogger(records, { ...base, ...f }) };
}

/** What every node's probe actors record, in one process-wide journal (performance.now() is shared). */
interface Journal {
  activations: Array<{ actor: string; node: string }>;
  runs: Array<{ actor: string; node: string; start: number; end: number }>;
}

interface ProbeDeps {
  node: string;
  journal: Journal;
}

type HitReply = { node: string; n: number };

const probe = defineActor<{ n: number }, ProbeDeps>({
  kind: 'probe',
  async activate(id, deps) {
    deps.journal.activations.push({ actor: id.str, node: deps.node });
    return { n: 0 };
  },
  handlers: {
    async hit(ctx, _payload: null, deps) {
      const start = performance.now();
      await new Promise((r) => setImmediate(r)); // a turn that spans an event-loop hop, like real I/O
      ctx.state = { n: ctx.state.n + 1 };
      deps.journal.runs.push({ actor: ctx.id.str, node: deps.node, start, end: performance.now() });
      return { node: deps.node, n: ctx.state.n };
    },
    async echo(_ctx, payload: unknown) {
      return payload;
    },
    async refuse() {
      throw new ServiceError('CONFLICT', 'Probe.Refused', 'refused on purpose', { field: 'n', retryable: false });
    },
  },
});

interface TestNode {
  name: string;
  conn: ClusterConnection;
  transport: NatsActorTransport;
  system: ActorSystem;
  logs: LogRecord[];
}

const journal: Journal = { activations: [], runs: [] };
const activationsOf = (actor: string): string[] => journal.activations.filter((a) => a.actor === actor).map((a) => a.node);

async function rejection(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    assert.equal(ServiceError.is(err), true, `expected a ServiceError, got ${String(err)}`);
    return err as ServiceError;
  }
  assert.fail('expected a rejection');
}

/** Bounded poll: resolves as soon as `cond` holds, fails after `limitMs`. */
async function until(cond: () => boolean, limitMs: number, what: string): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Handler runs of one actor on different nodes never overlap in time. */
function assertNoOverlap(actor: string): number {
  const runs = journal.runs.filter((r) => r.actor === actor).sort((a, b) => a.start - b.start);
  const lastEnd = new Map<string, number>();
  for (const r of runs) {
    for (const [node, end] of lastEnd) {
      if (node !== r.node) assert.ok(r.start >= end, `${actor}: run on ${r.node} at ${r.start.toFixed(1)} overlaps a run on ${node} ending ${end.toFixed(1)}`);
    }
    lastEnd.set(r.node, Math.max(lastEnd.get(r.node) ?? 0, r.end));
  }
  return runs.length;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timeAsks(n: number, ask: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 50; i++) await ask(); // warm up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await ask();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const isRetryable = (err: unknown): boolean => ServiceError.is(err) && err.retryable;

describe('actor transport on NATS (3-server JetStream cluster)', { skip: servicesSkip('nats') }, () => {
  let cluster: NatsCluster;
  const nodes: TestNode[] = [];

  async function startNode(name: string, opts: { only?: string; requestTimeoutMs?: number } = {}): Promise<TestNode> {
    const logs: LogRecord[] = [];
    const log = captureLogger(logs, { node: name });
    const conn = await connectCluster(opts.only === undefined ? { servers: cluster.urls, nodeId: name } : { servers: [opts.only], nodeId: name, ignoreClusterUpdates: true });
    const transport = new NatsActorTransport(conn, { leaseTtlMs: TTL_MS, requestTimeoutMs: opts.requestTimeoutMs ?? 3_000, log });
    await transport.ready();
    const system = new ActorSystem({ nodeId: name, idleMs: 60_000, askTimeoutMs: 10_000, maxMessagesPerTurn: 64, log, transport });
    system.register(probe, { node: name, journal });
    const node = { name, conn, transport, system, logs };
    nodes.push(node);
    return node;
  }

  /** Stop for good; tolerant of a node whose connection was already cut. */
  async function stopNode(node: TestNode): Promise<void> {
    const i = nodes.indexOf(node);
    if (i >= 0) nodes.splice(i, 1);
    await node.system.stop(); // releases leases first when the connection is up
    if (node.conn.nc.isClosed()) return;
    // Drain (flushes replies still buffered), but do not wait on a connection that cannot reach a server.
    await Promise.race([node.conn.close(), new Promise((r) => setTimeout(r, 2_000))]);
    if (!node.conn.nc.isClosed()) await node.conn.nc.close();
  }

  let a: TestNode;
  let b: TestNode;
  let c: TestNode;

  before(async () => {
    cluster = await NatsCluster.start(3);
    a = await startNode('A');
    b = await startNode('B');
    c = await startNode('C');
  });

  after(async () => {
    for (const node of [...nodes]) await stopNode(node).catch(() => undefined);
    await cluster?.stop();
  });

  it('runs an actor on the node that activated it; replies and ServiceErrors cross the wire intact', async () => {
    const id = new ActorId('probe', 'first');
    assert.deepEqual(await a.system.ask(id, 'hit', null), { node: 'A', n: 1 });
    assert.deepEqual(await b.system.ask(id, 'hit', null), { node: 'A', n: 2 });
    assert.deepEqual(await c.system.ask(id, 'hit', null), { node: 'A', n: 3 });

    const payload = { s: 'ü\u0000x', n: -1.5, big: 2 ** 40, list: [1, null, { deep: [true] }], empty: {} };
    assert.deepEqual(await b.system.ask(id, 'echo', payload), payload);

    const err = await rejection(b.system.ask(id, 'refuse', null));
    assert.deepEqual([err.code, err.reasonCode, err.message, err.details], ['CONFLICT', 'Probe.Refused', 'refused on purpose', { field: 'n', retryable: false }]);

    const bad = await rejection(b.system.ask(id, 'echo', { at: new Date() }));
    assert.deepEqual([bad.code, bad.reasonCode], ['VALIDATION_FAILED', 'Actor.NonPlainPayload']);
    const unknown = await rejection(b.system.ask(id, 'nope', null));
    assert.deepEqual([unknown.code, unknown.reasonCode], ['VALIDATION_FAILED', 'Actor.UnknownMessage']);

    // A key that needs escaping in a subject and a KV key.
    const odd = new ActorId('probe', 'a.b c/*>ü');
    assert.deepEqual(await c.system.ask(odd, 'hit', null), { node: 'C', n: 1 });
    assert.deepEqual(await a.system.ask(odd, 'hit', null), { node: 'C', n: 2 });

    assert.deepEqual(activationsOf(id.str), ['A']);
    assert.deepEqual(activationsOf(odd.str), ['C']);
  });

  it('50 concurrent first asks from three nodes make exactly one activation', async () => {
    const id = new ActorId('probe', 'hot');
    const senders = [a, b, c];
    const replies = (await Promise.all(
      Array.from({ length: 50 }, (_, i) => senders[i % 3]!.system.ask<HitReply>(id, 'hit', null)),
    ));
    assert.equal(activationsOf(id.str).length, 1, `activations: ${JSON.stringify(activationsOf(id.str))}`);
    const owner = activationsOf(id.str)[0];
    assert.ok(replies.every((r) => r.node === owner));
    assert.deepEqual(replies.map((r) => r.n).sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('two nodes racing to activate 100 actors: every actor gets exactly one activation', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => new ActorId('probe', `race-${i}`));
    const pairs = await Promise.all(
      // Alternate who sends first, so neither node is always a microtask ahead.
      ids.map((id, i) => {
        const ask = (n: TestNode): Promise<HitReply> => n.system.ask<HitReply>(id, 'hit', null);
        return Promise.all(i % 2 === 0 ? [ask(a), ask(b)] : [ask(b), ask(a)]);
      }),
    );
    const winners = { A: 0, B: 0 } as Record<string, number>;
    for (const [i, id] of ids.entries()) {
      if (i % 2 === 1) pairs[i]!.reverse();
      const acts = activationsOf(id.str);
      assert.equal(acts.length, 1, `${id.str}: ${JSON.stringify(acts)}`);
      const [ra, rb] = pairs[i]!;
      assert.equal(ra.node, acts[0]);
      assert.equal(rb.node, acts[0]);
      assert.deepEqual([ra.n, rb.n].sort(), [1, 2]);
      winners[acts[0]!] = (winners[acts[0]!] ?? 0) + 1;
    }
    console.log(`# race: 100 actors, activations won by A=${winners.A} B=${winners.B}, none twice`);
  });

  it('claims racing on a just-released lease: exactly one winner, 150 rounds out of 150', async () => {
    const silent = captureLogger([]);
    const tables = await Promise.all(
      [a, b, c].map((n) => PlacementLeases.open(n.conn, { ttlMs: TTL_MS, bucket: 'plinth_lease_race', log: silent, onLost: () => undefined })),
    );
    const id = new ActorId('probe', 'contested');
    const winners: number[] = [];
    for (let round = 0; round < 150; round++) {
      const until = performance.now() + 5_000;
      const got = await Promise.all(tables.flatMap((t) => [t.claim(id, until), t.claim(id, until)]));
      const won = got.filter((l) => l !== null);
      winners.push(won.length);
      for (const [i, l] of got.entries()) if (l !== null) await tables[Math.floor(i / 2)]!.release(l);
    }
    for (const t of tables) t.close();
    assert.deepEqual(winners.filter((w) => w !== 1), [], 'rounds without exactly one winner');
  });

  it('ask round-trip latency: in-process vs over NATS (printed for the benchmark)', async () => {
    const local = new ActorSystem({
      nodeId: 'solo', idleMs: 60_000, askTimeoutMs: 10_000, maxMessagesPerTurn: 64, log: captureLogger([]), transport: new InProcessTransport(),
    });
    local.register(probe, { node: 'solo', journal: { activations: [], runs: [] } });
    const payload = { projectId: 'p-1', name: 'bench', n: 42 };
    const id = new ActorId('probe', 'latency');
    const inProcess = await timeAsks(500, () => local.ask(id, 'echo', payload));
    await local.stop();
    await a.system.ask(id, 'echo', payload); // A owns it
    const ownerLocal = await timeAsks(500, () => a.system.ask(id, 'echo', payload));
    const remote = await timeAsks(500, () => b.system.ask(id, 'echo', payload));
    const f = (x: number): string => `${(x * 1000).toFixed(0)} µs`;
    console.log(`# ask latency (500 asks each): in-process p50 ${f(inProcess.p50)} p99 ${f(inProcess.p99)} | NATS transport, owner local p50 ${f(ownerLocal.p50)} p99 ${f(ownerLocal.p99)} | over NATS (other node) p50 ${f(remote.p50)} p99 ${f(remote.p99)}`);
    assert.ok(remote.p50 < 50, `cross-node p50 ${remote.p50} ms`);
  });

  it('a graceful stop hands its actors off at once (no TTL wait)', async () => {
    const d = await startNode('D');
    const id = new ActorId('probe', 'handoff');
    assert.deepEqual(await d.system.ask(id, 'hit', null), { node: 'D', n: 1 });
    assert.deepEqual(await b.system.ask(id, 'hit', null), { node: 'D', n: 2 });

    // Quiet hand-off: the next ask after the stop.
    await stopNode(d);
    const t0 = performance.now();
    const r = await b.system.ask<HitReply>(id, 'hit', null);
    const ms = performance.now() - t0;
    assert.equal(r.node, 'B');
    assert.equal(r.n, 1); // fresh activation (state lives in memory only in this probe)
    assert.ok(ms < TTL_MS / 3, `hand-off took ${ms} ms`);
    assert.deepEqual(activationsOf(id.str), ['D', 'B']);

    // Under traffic: F owns an actor that A and C keep asking while F stops.
    const f = await startNode('F');
    const busy = new ActorId('probe', 'handoff-busy');
    assert.equal((await f.system.ask<HitReply>(busy, 'hit', null)).node, 'F');
    let running = true;
    const served: Array<{ sentAt: number; at: number; node: string }> = [];
    const lost: string[] = [];
    const loop = async (from: TestNode): Promise<void> => {
      while (running) {
        try {
          const sentAt = performance.now();
          const rr = await from.system.ask<HitReply>(busy, 'hit', null);
          served.push({ sentAt, at: performance.now(), node: rr.node });
        } catch (err) {
          // A request already routed to F's server when F unsubscribed is dropped by NATS: it times out (retryable).
          if (!(ServiceError.is(err) && err.reasonCode === 'Actor.OwnerUnreachable')) throw err;
          lost.push(from.name);
        }
        await new Promise((res) => setImmediate(res));
      }
    };
    const loops = [loop(a), loop(c)];
    await until(() => served.length >= 20, 5_000, 'traffic before the stop');
    const stoppedAt = performance.now();
    await stopNode(f);
    await until(() => served.some((x) => x.node !== 'F'), 5_000, 'traffic after the stop');
    const moved = served.find((x) => x.node !== 'F')!;
    running = false;
    await Promise.all(loops);
    console.log(
      `# graceful hand-off: quiet, next ask served by ${r.node} after ${ms.toFixed(0)} ms; under traffic (2 senders), ` +
        `actor served by ${moved.node} ${(moved.at - stoppedAt).toFixed(0)} ms after stop() began, ${served.length} asks answered, ${lost.length} timed out in the hand-off`,
    );
    // An ask already routed to F when it unsubscribed is lost and times out after the request
    // timeout (3 s), holding its sender meanwhile; the hand-off is judged by the first answer
    // from the new owner: quick from its own send, and well before the lease TTL from the stop.
    assert.ok(moved.at - moved.sentAt < 1_000, `the new owner answered ${(moved.at - moved.sentAt).toFixed(0)} ms after the ask`);
    assert.ok(moved.at - stoppedAt < TTL_MS - 1_000, 'moved without a TTL wait');
    assert.ok(lost.length <= 2, `at most one in-flight ask per sender may be lost: ${lost.join()}`);
    assert.equal(activationsOf(busy.str).length, 2);
    assertNoOverlap(id.str);
    assertNoOverlap(busy.str);
  });

  it('an owner that dies without releasing: the actor moves after ≈ TTL, never two owners at once', async () => {
    const e = await startNode('E');
    const id = new ActorId('probe', 'orphan');
    assert.deepEqual(await e.system.ask(id, 'hit', null), { node: 'E', n: 1 });
    assert.deepEqual(await b.system.ask(id, 'hit', null), { node: 'E', n: 2 });

    // B and C keep asking through the failover.
    let running = true;
    const served: Array<{ at: number; node: string }> = [];
    const errors: string[] = [];
    const loop = async (from: TestNode): Promise<void> => {
      while (running) {
        try {
          const r = await from.system.ask<HitReply>(id, 'hit', null);
          served.push({ at: performance.now(), node: r.node });
        } catch (err) {
          if (!isRetryable(err)) throw err;
          errors.push((err as ServiceError).reasonCode);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const loops = [loop(b), loop(c)];
    await until(() => served.length >= 4, 5_000, 'asks served before the crash');

    const killedAt = performance.now();
    await e.conn.nc.close(); // abrupt: no lease release, no unsubscribe handshake
    await until(() => served.some((s) => s.at > killedAt && s.node !== 'E'), TTL_MS + 5_000, 'actor served elsewhere');
    const moved = served.find((s) => s.at > killedAt && s.node !== 'E')!;
    running = false;
    await Promise.all(loops);
    await stopNode(e);

    const failoverMs = moved.at - killedAt;
    console.log(`# owner crash: actor served by ${moved.node} ${failoverMs.toFixed(0)} ms after the owner died (TTL ${TTL_MS} ms); retryable errors meanwhile: ${errors.length} (${[...new Set(errors)].join(', ')})`);
    assert.ok(failoverMs < TTL_MS + 1_500, `failover took ${failoverMs} ms`);
    const acts = activationsOf(id.str);
    assert.deepEqual(acts, ['E', moved.node]);
    const runs = assertNoOverlap(id.str);
    assert.ok(runs > 4);
  });

  it('kill -9 of the NATS server leading the lease bucket: asks keep working; a partitioned owner is fenced', async () => {
    const info = await a.conn.jsm.streams.info(`KV_${LEASE_BUCKET}`);
    const leader = info.cluster?.leader ?? 'n1';
    const k = Number(leader.slice(1)) - 1;
    // P reaches the cluster only through the server that will die: after the kill it is a live but partitioned owner.
    const p = await startNode('P', { only: cluster.urls[k]!, requestTimeoutMs: 1_000 });
    const steady = new ActorId('probe', 'steady');
    const cut = new ActorId('probe', 'cut-off');
    assert.equal((await a.system.ask<HitReply>(steady, 'hit', null)).node, 'A');
    assert.equal((await p.system.ask<HitReply>(cut, 'hit', null)).node, 'P');
    assert.equal((await b.system.ask<HitReply>(cut, 'hit', null)).node, 'P');

    let running = true;
    const ok: Record<string, number[]> = { steady: [], cutLocal: [], cutRemote: [] };
    const remoteNodes: string[] = [];
    const errors: Record<string, number> = {};
    const loop = async (from: TestNode, id: ActorId, key: string, timeoutMs: number): Promise<void> => {
      while (running) {
        try {
          const r = await from.system.ask<HitReply>(id, 'hit', null, { timeoutMs });
          // For P count only its own turns (it cannot reach anyone else anyway).
          if (key !== 'cutLocal' || r.node === 'P') ok[key]!.push(performance.now());
          if (key === 'cutRemote') remoteNodes.push(r.node);
        } catch (err) {
          if (!isRetryable(err)) throw err;
          const code = (err as ServiceError).reasonCode;
          errors[code] = (errors[code] ?? 0) + 1;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const loops = [loop(b, steady, 'steady', 10_000), loop(c, steady, 'steady', 10_000), loop(p, cut, 'cutLocal', 2_000), loop(b, cut, 'cutRemote', 10_000)];
    await until(() => ok.steady!.length >= 5 && ok.cutLocal!.length >= 3, 5_000, 'traffic before the kill');

    const killedAt = performance.now();
    await cluster.kill(k);
    const movedAt = (): number | undefined => {
      const i = remoteNodes.findIndex((n) => n !== 'P');
      return i < 0 ? undefined : ok.cutRemote![i];
    };
    try {
      await until(() => movedAt() !== undefined && ok.steady!.some((t) => t > killedAt + 1_000), 30_000, 'service after the kill');
    } catch (err) {
      const rel = (xs: number[]): string => xs.filter((t) => t > killedAt - 500).map((t) => (t - killedAt).toFixed(0)).join(',');
      console.log(`# DIAG steady=${rel(ok.steady!)} cutLocal=${rel(ok.cutLocal!)} cutRemote=${rel(ok.cutRemote!)} nodes=${remoteNodes.join(',')} errors=${JSON.stringify(errors)}`);
      for (const n of nodes) for (const l of n.logs.filter((x) => x.level !== 'info')) console.log(`# DIAG ${n.name} ${l.level} ${l.msg} ${JSON.stringify(l.fields)}`);
      throw err;
    }
    running = false;
    await Promise.all(loops);

    const steadyTimes = [killedAt, ...ok.steady!.filter((t) => t > killedAt)];
    let gap = 0;
    for (let i = 1; i < steadyTimes.length; i++) gap = Math.max(gap, steadyTimes[i]! - steadyTimes[i - 1]!);
    const lastLocal = Math.max(...ok.cutLocal!);
    console.log(
      `# NATS server ${leader} (lease bucket leader) killed: longest gap between successful asks ${gap.toFixed(0)} ms; ` +
        `partitioned owner P served locally until +${(lastLocal - killedAt).toFixed(0)} ms, actor moved to ${remoteNodes.find((n) => n !== 'P')} at +${(movedAt()! - killedAt).toFixed(0)} ms; ` +
        `retryable errors meanwhile ${JSON.stringify(errors)}`,
    );
    assert.ok(gap < 20_000, `gap ${gap} ms`);
    assert.ok(lastLocal < movedAt()!, 'the partitioned owner stopped before the actor moved');
    assertNoOverlap(steady.str);
    assertNoOverlap(cut.str);
    assert.equal(activationsOf(cut.str).length, 2);

    cluster.startServer(k);
    await cluster.waitReady();
    await stopNode(p);
  });
});
