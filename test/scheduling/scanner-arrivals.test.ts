/**
 * Runs that arrive rather than come due: entity events routed to event triggers
 * (kinds, a filter on the row as it is now, a paused definition audited
 * `skippedPaused`), inbound webhook deliveries to webhook triggers (a
 * redelivery starts no second run), and the TriggerAudit routes. The node's
 * worker is stopped (stopWorker): runs stay `queued`.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { createTask, publishJob, stopWorker, type TaskOptions } from './support.js';
import { atLeast, decisionsOf, runsOf } from './scanner-support.js';

const stripe = new Stripe('sk_test_unused');
const SECRET = `whsec_${randomUUID().replace(/-/g, '')}`;

forEachBackend('scheduler: event and webhook triggers', (backend: Backend) => {
  let server: TestServer;
  let client: Client;
  let projectId: string;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    client = p.client;
    projectId = p.projectId;
    await stopWorker(server);
    await publishJob(client, 'job', 'export default async () => null;');
    await defineEntity(client, { entityName: 'Order', fields: [{ name: 'amount', type: 'Int', nullable: false }] });
  });
  after(async () => {
    await server?.close();
  });
  const db = () => server.node.services.db;
  const task = (t: Omit<TaskOptions, 'handler'>) => createTask(client, { handler: 'job', ...t });

  it('one run per created row, with its event; a filter on the row leaves one out; a paused definition is audited skippedPaused', async () => {
    const all = await task({ overlap: 'queue', input: { all: true }, trigger: { kind: 'event', entity: 'Order', kinds: ['created'] } });
    const big = await task({ trigger: { kind: 'event', entity: 'Order', kinds: ['created'], filter: { amount: { gt: 10 } } } });
    const updates = await task({ trigger: { kind: 'event', entity: 'Order', kinds: ['updated'] } });
    const paused = await task({ state: 'paused', trigger: { kind: 'event', entity: 'Order', kinds: ['created'] } });
    const ids: string[] = [];
    for (const amount of [5, 20, 30]) {
      const r = await client.post('/api/orders', { amount });
      expectStatus(r, 201);
      ids.push(r.body.data.id);
    }
    const runs = await atLeast(() => runsOf(client, all.definitionId), 3);
    assert.equal(runs.length, 3);
    for (const r of runs) {
      assert.equal(r.cause, 'event');
      assert.equal(r.state, 'queued');
      assert.deepEqual(r.input, { all: true });
      assert.match(r.eventId, /^[0-9a-f-]{36}$/);
    }
    assert.equal(new Set(runs.map((r) => r.eventId)).size, 3);
    const bigRuns = await atLeast(() => runsOf(client, big.definitionId), 2);
    assert.equal(bigRuns.length, 2);
    // The run's event is the row's event in the log, and scheduledFor its occurredAt.
    const events = (await client.get(`/api/events?pageSize=200&filter=${encodeURIComponent(JSON.stringify({ type: 'entity.Order.created' }))}`)).body.data as any[];
    const byId = new Map(events.map((e) => [e.id, e]));
    for (const r of runs) {
      const e = byId.get(r.eventId);
      assert.ok(e !== undefined, `event ${r.eventId} in the log`);
      // To the millisecond: the log shows PostgreSQL's microseconds, a record ISO 8601 milliseconds.
      assert.equal(Date.parse(r.scheduledFor), Date.parse(e.occurredAt));
    }
    const excluded = events.find((e) => e.data.entityId === ids[0])!;
    assert.ok(!bigRuns.some((r) => r.eventId === excluded.id), 'the row of amount 5 does not match amount > 10');
    const pausedRows = await atLeast(() => decisionsOf(client, paused.definitionId), 3);
    assert.deepEqual(pausedRows.map((d) => d.decision), ['skippedPaused', 'skippedPaused', 'skippedPaused']);
    assert.equal((await runsOf(client, paused.definitionId)).length, 0);
    assert.equal((await runsOf(client, updates.definitionId)).length, 0, 'created events do not fire an updated trigger');
    expectStatus(await client.patch(`/api/orders/${ids[1]}`, { amount: 21 }), 200);
    assert.equal((await atLeast(() => runsOf(client, updates.definitionId), 1)).length, 1);
  });

  it('a webhook delivery starts one run; the same delivery again starts none', async () => {
    const rec = await client.post('/api/webhooks/receivers', { name: 'payments', signingSecret: SECRET });
    expectStatus(rec, 201);
    const receiver = rec.body.data;
    const hook = await task({ overlap: 'skip', trigger: { kind: 'webhook', receiverId: receiver.id } });
    const pausedHook = await task({ state: 'paused', trigger: { kind: 'webhook', receiverId: receiver.id } });
    const payload = JSON.stringify({ id: 'evt_1', type: 'payment.succeeded', data: { amount: 12 } });
    const anon = new Client(server.url);
    const send = () => anon.post(`/api/webhooks/inbound/${receiver.publicReceiverKey}`, payload,
      { 'service-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) }) });
    const first = await send();
    expectStatus(first, 202);
    const runs = await runsOf(client, hook.definitionId);
    assert.equal(runs.length, 1, 'the run is queued with the receipt');
    assert.equal(runs[0].cause, 'webhook');
    assert.equal(runs[0].eventId, first.body.data.eventId);
    assert.equal(runs[0].state, 'queued');
    const again = await send();
    expectStatus(again, 202);
    assert.equal(again.body.data.duplicate, true);
    assert.equal((await runsOf(client, hook.definitionId)).length, 1);
    assert.deepEqual((await decisionsOf(client, pausedHook.definitionId)).map((d) => d.decision), ['skippedPaused']);
    const ctx = (await db().query<{ context: any }>(`SELECT context FROM plinth.task_runs WHERE id = $1`, [runs[0].id])).rows[0]!.context;
    assert.deepEqual(ctx.webhook, { receiverId: receiver.id, receiptId: first.body.data.receiptId, type: 'payment.succeeded', externalId: 'evt_1', payload: { amount: 12 } });
  });

  it('TriggerAudit: events page newest first, Summary counts, Diagnostics, Clear', async () => {
    const { definitionId } = await task({ overlap: 'skip', trigger: { kind: 'interval', intervalSeconds: 1 } });
    await atLeast(() => decisionsOf(client, definitionId, 'skippedOverlap'), 2);
    expectStatus(await client.delete(`/api/scheduling/taskdefinition/${definitionId}`), 204);
    const all = await decisionsOf(client, definitionId);
    const page1 = await client.get(`/api/TriggerAudit/Events?definitionId=${definitionId}&pageSize=2`);
    expectStatus(page1, 200);
    assert.deepEqual(page1.body.data, all.slice(0, 2));
    assert.ok(Date.parse(all[0].at) >= Date.parse(all[all.length - 1].at), 'newest first');
    const page2 = await client.get(`/api/TriggerAudit/Events?definitionId=${definitionId}&pageSize=2&cursor=${page1.body.page.next}`);
    expectStatus(page2, 200);
    assert.deepEqual(page2.body.data, all.slice(2, 4));
    expectError(await client.get(`/api/TriggerAudit/Events?decision=started&cursor=${page1.body.page.next}`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
    expectError(await client.get('/api/TriggerAudit/Events?decision=fired'), 422, 'VALIDATION_FAILED', 'TriggerAudit.InvalidDecision', 'decision');
    expectError(await client.get('/api/scheduling/taskrun?state=done'), 422, 'VALIDATION_FAILED', 'TaskRun.InvalidState', 'state');
    expectError(await client.get(`/api/scheduling/taskrun/${randomUUID()}`), 404, 'NOT_FOUND', 'TaskRun.NotFound');

    const summary = await client.get('/api/TriggerAudit/Summary');
    expectStatus(summary, 200);
    const mine = (summary.body.data as any[]).filter((s) => s.definitionId === definitionId);
    const counted = new Map(mine.map((s) => [s.decision, s.count]));
    assert.equal(counted.get('started'), all.filter((d) => d.decision === 'started').length);
    assert.equal(counted.get('skippedOverlap'), all.filter((d) => d.decision === 'skippedOverlap').length);

    const diag = await client.get('/api/TriggerAudit/Diagnostics');
    expectStatus(diag, 200);
    const d = diag.body.data;
    assert.equal(d.scanner.node, server.node.services.nodeId);
    assert.ok(Date.now() - Date.parse(d.scanner.lastScanAt) < 5_000);
    assert.ok(d.scanner.lagMs >= 0 && d.scanner.lagMs < 1_000, `lag ${d.scanner.lagMs}`);
    const queued = (await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM plinth.task_runs WHERE project_id = $1 AND state = 'queued'`, [projectId])).rows[0]!.n;
    assert.equal(d.queued, queued);
    assert.equal(d.running, 0);

    expectStatus(await client.delete('/api/TriggerAudit/Clear'), 204);
    assert.deepEqual((await client.get('/api/TriggerAudit/Summary')).body.data, []);
    // Another project's admin view: scoped to its own project.
    const other = await bootstrapProject(server.url, server.adminToken);
    expectStatus(await other.client.get('/api/TriggerAudit/Diagnostics'), 200);
    assert.equal((await other.client.get('/api/TriggerAudit/Diagnostics')).body.data.queued, 0);
  });
});
