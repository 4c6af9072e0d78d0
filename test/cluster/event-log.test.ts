/**
 * The event log on a real 3-server JetStream cluster: outbox rows written by
 * real SQL inserts are moved by the outbox processor with the JetStream sink.
 * Every event lands in the stream exactly once (after dedupe), the SQL
 * projection matches, the outbox ends empty; a batch published twice (crash
 * after publish, before commit) is deduplicated; killing one NATS server
 * (-9, the stream leader) mid-stream loses nothing. Counts, recovery time and
 * events/s are printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ActorSystem } from '../../actors/index.js';
import { OutboxDriver, outboxActor } from '../../actors/outbox/index.js';
import { InProcessTransport } from '../../cluster/in-process-transport.js';
import { connectCluster, type ClusterConnection } from '../../cluster/nats-connection.js';
import { JetStreamEventLog, type StoredEvent } from '../../cluster/event-stream.js';
import { eventsAfter, type EventEnvelope } from '../../runtime/events/event-store.js';
import { LogEventTail } from '../../runtime/events/event-tail.js';
import { OutboxProcessor } from '../../runtime/events/outbox-processor.js';
import { createLogger } from '../../runtime/log.js';
import { migratePlatform, PgClient, PgliteClient, type SqlClient } from '../../storage/index.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

const quiet = createLogger((process.env.TEST_LOG_LEVEL ?? 'silent') as 'silent');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Scope {
  tenantId: string;
  projectId: string;
}
const newScope = (): Scope => ({ tenantId: randomUUID(), projectId: randomUUID() });

/** `n` outbox rows for one project, as an entity write would leave them; returns their event ids in outbox order. */
async function insertOutbox(db: SqlClient, s: Scope, n: number, entity = 'Order'): Promise<string[]> {
  const res = await db.query<{ event_id: string }>(
    `INSERT INTO plinth.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
     SELECT gen_random_uuid(), $3, $1::uuid, $2::uuid, 'main', $4, gen_random_uuid()::text, '["total","status"]'::jsonb, 'corr-' || g, 1
     FROM generate_series(1, $5::int) g ORDER BY g RETURNING event_id`,
    [s.tenantId, s.projectId, `entity.${entity}.created`, entity, n],
  );
  return res.rows.map((r) => r.event_id);
}

const count = async (db: SqlClient, sql: string, params: unknown[] = []): Promise<number> =>
  Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);

/** A client whose next `failures` transactions run fully, then fail instead of committing (a crash after publish, before commit). */
function failingCommits(db: SqlClient, state: { failures: number }): SqlClient {
  return {
    backend: db.backend,
    query: (sql, params) => db.query(sql, params),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    transaction: (fn) =>
      db.transaction(async (tx) => {
        const out = await fn(tx);
        if (state.failures > 0) {
          state.failures--;
          throw new Error('simulated crash before COMMIT');
        }
        return out;
      }),
  } as SqlClient;
}

function assertExactlyOnce(stored: StoredEvent[], ids: string[], what: string): void {
  const msgIds = stored.map((m) => m.msgId);
  const unique = new Set(msgIds);
  assert.equal(stored.length, ids.length, `${what}: ${stored.length} messages in the stream for ${ids.length} events`);
  assert.equal(unique.size, ids.length, `${what}: duplicate message ids in the stream`);
  for (const m of stored) assert.equal(m.msgId, m.event.id, 'message id is the event id');
  const missing = ids.filter((id) => !unique.has(id));
  assert.deepEqual(missing, [], `${what}: events missing from the stream`);
}

describe('event log on JetStream (3 NATS servers)', { skip: servicesSkip('nats') }, () => {
  let nats: NatsCluster;
  let conn: ClusterConnection;
  let db: SqlClient;
  let dropDb: (() => Promise<void>) | null = null;
  let log: JetStreamEventLog;

  before(async () => {
    const [cluster, storage] = await Promise.all([
      NatsCluster.start(3),
      (async () => {
        if (TEST_DATABASE_URL !== null) {
          const t = await createTestDatabase();
          dropDb = t.drop;
          return new PgClient({ connectionString: t.url, max: 5 }) as SqlClient;
        }
        return (await PgliteClient.open(undefined)) as SqlClient;
      })(),
    ]);
    nats = cluster;
    db = storage;
    await migratePlatform(db);
    conn = await connectCluster({ servers: nats.urls, nodeId: 'event-log-test' });
    log = new JetStreamEventLog(conn);
    await log.ensure();
    const info = await conn.jsm.streams.info(log.stream);
    assert.equal(info.config.num_replicas, 3);
    assert.deepEqual(info.config.subjects, ['evt.>']);
    console.log(`[event-log] storage ${db.backend}; stream ${log.stream} R${info.config.num_replicas}, dedupe window ${info.config.duplicate_window / 1e9} s`);
  });

  after(async () => {
    await conn?.close();
    await nats?.stop();
    await db?.close();
    if (dropDb !== null) await dropDb();
  });

  it('every outbox row reaches the stream exactly once; the projection matches; the outbox ends empty', async () => {
    const s = newScope();
    const ids = await insertOutbox(db, s, 1200);
    const proc = new OutboxProcessor(db, quiet, { sink: log });
    assert.equal(await proc.drain(), 1200);
    const stored = await log.read(s.tenantId, s.projectId);
    assertExactlyOnce(stored, ids, 'drain');
    // Stream order is outbox order (one connection, one stream).
    assert.deepEqual(stored.map((m) => m.event.id), ids);
    assert.equal(stored[0]!.subject, `evt.${s.tenantId}.${s.projectId}.Order.created`);
    // The projection holds the same envelopes, in the same order.
    const projected = await eventsAfter(db, s.projectId, '0', 5_000);
    assert.deepEqual(projected.map((p) => p.event), stored.map((m) => m.event));
    assert.equal(await count(db, 'SELECT count(*) AS n FROM plinth.outbox'), 0);
    // Ensure is idempotent (every node runs it at boot).
    await log.ensure();
    console.log(`[event-log] exactly once: outbox rows ${ids.length}, stream messages ${stored.length}, unique ids ${new Set(stored.map((m) => m.msgId)).size}, projection rows ${projected.length}`);
  });

  it('a batch published twice (crash after publish, before commit) is in the stream once', async () => {
    const s = newScope();
    const ids = await insertOutbox(db, s, 300);
    const fail = { failures: 1 };
    const proc = new OutboxProcessor(failingCommits(db, fail), quiet, { sink: log });
    const dupBefore = log.stats.duplicates;
    assert.equal(await proc.drain(), 0, 'the first drain must fail at commit');
    assert.equal(proc.stats.failures, 1);
    // Rolled back: the rows are still in the outbox, nothing in the projection, but the stream has them.
    assert.equal(await count(db, 'SELECT count(*) AS n FROM plinth.outbox WHERE project_id = $1', [s.projectId]), 300);
    assert.equal(await count(db, 'SELECT count(*) AS n FROM plinth.events WHERE project_id = $1', [s.projectId]), 0);
    assert.equal((await log.read(s.tenantId, s.projectId)).length, 300);
    // The retry republishes the same ids: JetStream drops them as duplicates.
    assert.equal(await proc.drain(), 300);
    const stored = await log.read(s.tenantId, s.projectId);
    assertExactlyOnce(stored, ids, 'after republish');
    const duplicates = log.stats.duplicates - dupBefore;
    assert.equal(duplicates, 300);
    assert.equal(await count(db, 'SELECT count(*) AS n FROM plinth.events WHERE project_id = $1', [s.projectId]), 300);
    assert.equal(await count(db, 'SELECT count(*) AS n FROM plinth.outbox'), 0);
    console.log(`[event-log] republish: events ${ids.length}, published twice ${ids.length}, acks marked duplicate ${duplicates}, stream messages ${stored.length}, projection rows 300`);
  });

  it('the tail follows a project from the end and resumes after a position', async () => {
    const s = newScope();
    const other = newScope();
    const tail = new LogEventTail(log);
    const proc = new OutboxProcessor(db, quiet, { sink: log });
    await insertOutbox(db, s, 5);
    await proc.drain();
    const got: Array<{ position: string; e: EventEnvelope }> = [];
    const start = await tail.start(s, null);
    assert.match(start, /^j\d+$/);
    const stop = tail.follow(s, start, { event: (position, e) => got.push({ position, e }), error: (err) => assert.fail(String(err)) });
    const ids = await insertOutbox(db, s, 50);
    await insertOutbox(db, other, 20); // another project's events never show up
    await proc.drain();
    const deadline = Date.now() + 10_000;
    while (got.length < 50 && Date.now() < deadline) await sleep(20);
    stop();
    assert.deepEqual(got.map((g) => g.e.id), ids, 'exactly the events after the start, in order');
    // Resume after the 20th: the other 30 follow.
    const resumed: string[] = [];
    const stop2 = tail.follow(s, await tail.start(s, got[19]!.position), { event: (_p, e) => resumed.push(e.id), error: (err) => assert.fail(String(err)) });
    while (resumed.length < 30 && Date.now() < deadline + 5_000) await sleep(20);
    await sleep(100);
    stop2();
    assert.deepEqual(resumed, ids.slice(20));
    await assert.rejects(tail.start(s, 'e12'), /Last-Event-ID/);
    // Past the stream's last sequence: never produced, so refused (422) rather than silently skipping ahead.
    const end = Number((await tail.start(s, null)).slice(1));
    assert.equal(await tail.start(s, `j${end}`), `j${end}`);
    await assert.rejects(tail.start(s, `j${end + 1000}`), (e: { reasonCode?: string }) => e.reasonCode === 'Events.InvalidLastEventId' && /past the end/.test(String(e)));
  });

  it('throughput outbox → JetStream (R3) for 5,000 events', async () => {
    const s = newScope();
    const ids = await insertOutbox(db, s, 5_000);
    const proc = new OutboxProcessor(db, quiet, { sink: log });
    const t0 = performance.now();
    const moved = await proc.drain();
    const ms = performance.now() - t0;
    assert.equal(moved, 5_000);
    const stored = await log.read(s.tenantId, s.projectId);
    assertExactlyOnce(stored, ids, 'throughput');
    console.log(`[event-log] throughput: ${moved} events in ${ms.toFixed(0)} ms = ${Math.round((moved / ms) * 1000)} events/s (batches of 500: SELECT FOR UPDATE, publish + acks, projection insert, delete, commit; ${db.backend})`);
  });

  it('kill -9 of the stream leader mid-stream loses no event (outbox actor + driver)', async () => {
    const s = newScope();
    const system = new ActorSystem({ nodeId: 'event-log-test', idleMs: 60_000, askTimeoutMs: 60_000, maxMessagesPerTurn: 64, log: quiet, transport: new InProcessTransport() });
    const proc = new OutboxProcessor(db, quiet, { sink: log });
    system.register(outboxActor, { processor: proc });
    const driver = new OutboxDriver({ system, log: quiet });
    const commits: number[] = [];
    proc.onCommitted(() => commits.push(Date.now()));
    driver.start();

    // A tail follows the project through the kill (its R1 ordered consumer may live on the dead server).
    const tail = new LogEventTail(log);
    const tailed = new Set<string>();
    let tailErrors = 0;
    const stopTail = tail.follow(s, await tail.start(s, null), { event: (_p, e) => void tailed.add(e.id), error: () => void tailErrors++ });

    const ids: string[] = [];
    const t0 = Date.now();
    let killAt = 0;
    let killed = '';
    const writer = (async () => {
      while (Date.now() - t0 < 7_000) {
        ids.push(...(await insertOutbox(db, s, 20)));
        driver.kick();
        await sleep(15);
      }
    })();
    await sleep(2_000);
    const leader = (await conn.jsm.streams.info(log.stream)).cluster?.leader ?? 'n1';
    killed = leader;
    killAt = Date.now();
    await nats.kill(Number(leader.slice(1)) - 1);
    await writer;
    const written = ids.length;

    // Drain the rest (the sweep and the kicks keep going), bounded.
    const deadline = Date.now() + 30_000;
    while ((await count(db, 'SELECT count(*) AS n FROM plinth.outbox WHERE project_id = $1', [s.projectId])) > 0) {
      if (Date.now() > deadline) assert.fail('outbox did not drain after the NATS server was killed');
      await sleep(100);
    }
    const drainedAt = Date.now();
    await driver.stop();
    await system.stop();

    const stored = await log.read(s.tenantId, s.projectId);
    assertExactlyOnce(stored, ids, 'after kill');
    const tailDeadline = Date.now() + 20_000;
    while (tailed.size < written && Date.now() < tailDeadline) await sleep(50);
    stopTail();
    const tailComplete = Date.now() - drainedAt;
    assert.equal(tailed.size, written, `the tail saw ${tailed.size} of ${written} events (${tailErrors} source errors)`);
    assert.equal(await count(db, 'SELECT count(*) AS n FROM plinth.events WHERE project_id = $1', [s.projectId]), written);
    // Recovery: the longest pause between committed batches after the kill (publishes waiting out the leader election).
    const after = commits.filter((t) => t >= killAt);
    let gap = after.length === 0 ? drainedAt - killAt : after[0]! - killAt;
    for (let i = 1; i < after.length; i++) gap = Math.max(gap, after[i]! - after[i - 1]!);
    console.log(`[event-log] kill -9 ${killed} (stream leader) at +${killAt - t0} ms: events written ${written}, in stream ${stored.length}, unique ${new Set(stored.map((m) => m.msgId)).size}, lost 0, ack duplicates so far ${log.stats.duplicates}; publishing stalled at most ${gap} ms; outbox empty ${drainedAt - killAt} ms after the kill; kicks ${driver.stats.kicks}, ticks ${driver.stats.ticks}, drains that failed ${proc.stats.failures}; a live tail saw all ${tailed.size} (complete ${tailComplete} ms after the outbox emptied)`);
    nats.startServer(Number(leader.slice(1)) - 1);
  });
});
