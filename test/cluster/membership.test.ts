import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Membership, MEMBERSHIP_DEFAULTS, type Member } from '../../cluster/membership.js';
import { connectCluster, type ClusterConnection } from '../../cluster/nats-connection.js';
import type { Logger } from '../../runtime/log.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { servicesSkip } from '../support/services.js';

const silent: Logger = { info() {}, warn() {}, error() {}, child: () => silent };

/** Bounded poll on an async probe: resolves with the first value that satisfies `ok`. */
async function pollUntil<T>(probe: () => Promise<T>, ok: (v: T) => boolean, limitMs: number, what: string): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ids = (ms: Member[]): string[] => ms.map((m) => m.nodeId);

describe('cluster membership (plinth_members KV bucket)', { skip: servicesSkip('nats') }, () => {
  let cluster: NatsCluster;
  const conns: ClusterConnection[] = [];
  const members: Membership[] = [];

  async function join(nodeId: string, activations: number): Promise<{ conn: ClusterConnection; m: Membership }> {
    const conn = await connectCluster({ servers: cluster.urls, nodeId });
    conns.push(conn);
    const m = new Membership(conn, { log: silent });
    members.push(m);
    await m.start(() => ({ activations, inFlight: 1, rssBytes: 1024 }), () => `http://127.0.0.1:${4000 + activations}`);
    return { conn, m };
  }

  before(async () => {
    cluster = await NatsCluster.start(3);
  });

  after(async () => {
    for (const m of members) await m.stop().catch(() => undefined);
    for (const c of conns) if (!c.nc.isClosed()) await c.close();
    await cluster?.stop();
  });

  it('lists live members with their load; one that leaves disappears at once, one that dies after the TTL', async () => {
    const one = await join('node-1', 1);
    const two = await join('node-2', 2);

    const both = await pollUntil(() => one.m.members(), (ms) => ms.length === 2, 10_000, 'two members');
    assert.deepEqual(ids(both), ['node-1', 'node-2']);
    const m2 = both[1]!;
    assert.deepEqual([m2.url, m2.load], ['http://127.0.0.1:4002', { activations: 2, inFlight: 1, rssBytes: 1024 }]);
    assert.ok(!Number.isNaN(Date.parse(m2.startedAt)) && !Number.isNaN(Date.parse(m2.updatedAt)));
    assert.deepEqual(ids(await two.m.members()), ['node-1', 'node-2']);

    // Graceful leave: the entry is deleted. A listing that times out on a loaded machine answers from the
    // previous one, so the next listings (not a TTL later) must show it gone.
    await two.m.stop();
    await pollUntil(() => one.m.members(), (ms) => ids(ms).join() === 'node-1', 3_000, 'node-2 gone after leaving');

    // Crash: no goodbye, the heartbeats just stop.
    const three = await join('node-3', 3);
    await pollUntil(() => one.m.members(), (ms) => ms.length === 2, 10_000, 'node-3 joined');
    const diedAt = performance.now();
    await three.conn.nc.close();
    // Still listed for a while: its last heartbeat is fresh.
    const dying = await one.m.members();
    assert.deepEqual(ids(dying), ['node-1', 'node-3']);
    const lastBeat = Date.parse(dying[1]!.updatedAt);
    await pollUntil(() => one.m.members(), (ms) => ids(ms).join() === 'node-1', MEMBERSHIP_DEFAULTS.ttlMs + 5_000, 'dead node-3 gone');
    const goneMs = performance.now() - diedAt;
    const sinceBeatMs = Date.now() - lastBeat;
    console.log(`# membership: a crashed node left the list ${goneMs.toFixed(0)} ms after its death, ${sinceBeatMs} ms after its last heartbeat (TTL ${MEMBERSHIP_DEFAULTS.ttlMs} ms, heartbeat ${MEMBERSHIP_DEFAULTS.heartbeatMs} ms)`);
    // Measured from its last heartbeat (a loaded machine can delay beats): listed for the whole TTL, then gone.
    assert.ok(sinceBeatMs > MEMBERSHIP_DEFAULTS.ttlMs - 500, `gone too early: ${sinceBeatMs} ms after its last heartbeat`);
    assert.ok(goneMs < MEMBERSHIP_DEFAULTS.ttlMs + 3_000, `gone too late: ${goneMs} ms after its death`);
  });
});
