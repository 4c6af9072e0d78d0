/**
 * Scheduling as one whole (CONTRACT "Scheduling"): a trigger's arrival is run
 * by the worker as the handler's service profile: time triggers with `ctx.run`,
 * event consumers with `ctx.event` (names only) reading the row through their
 * grants, webhook handlers with `ctx.webhook`; a write without its grant fails
 * the attempt; the run's ending is in the event log; deleting a definition
 * cancels its queued runs, which stay readable.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData } from '../control/support.js';
import { createTask, DEFINITIONS, publishJob } from './support.js';
import { runsOf as runsListed } from './scanner-support.js';

const stripe = new Stripe('sk_test_unused');
const SECRET = `whsec_${randomUUID().replace(/-/g, '')}`;
const FINISHED = ['succeeded', 'failed', 'cancelled'];

forEachBackend('scheduling: end to end', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  before(async () => {
    server = await startServer({ backend });
    c = (await bootstrapProject(server.url, server.adminToken)).client;
    await defineEntity(c, { entityName: 'Mark', fields: [{ name: 'note', type: 'String', nullable: true }] });
    await defineEntity(c, { entityName: 'Order', fields: [{ name: 'amount', type: 'Int', nullable: false }] });
  });
  after(async () => {
    await server?.close();
  });

  const readRun = async (id: string): Promise<any> => controlData(await c.get(`/api/scheduling/taskrun/${id}`), 200, 'TaskRun', 'read');
  const runsOf = (definitionId: string): Promise<any[]> => runsListed(c, definitionId);
  /** Polls until `read` answers something `done` accepts (or fails after `ms`). */
  async function poll<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 15_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (done(v)) return v;
      if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(v).slice(0, 500)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  const finished = (id: string): Promise<any> => poll(() => readRun(id), (r) => FINISHED.includes(r.state), `run ${id} finishes`);
  const marks = async (): Promise<any[]> => {
    const r = await c.get('/api/marks?pageSize=200');
    expectStatus(r, 200);
    return r.body.data;
  };
  const remove = async (id: string): Promise<void> => expectStatus(await c.delete(`${DEFINITIONS}/${id}`), 204);

  it('a cron and an interval ScheduledJob run: succeeded, the write committed, ctx.run of cause schedule with its scheduledFor', async () => {
    await publishJob(c, 'tick', `export default async function (ctx, input) {
      await ctx.db.marks.create({ note: input.tag + ' ' + ctx.run.id });
      return { run: ctx.run };
    }`, 'ScheduledJob', ['entity:Mark:*']);
    for (const trigger of [{ kind: 'interval', intervalSeconds: 1 }, { kind: 'cron', cron: '* * * * * *', timezone: 'UTC' }] as const) {
      const tag = randomUUID();
      const { definitionId } = await createTask(c, { handler: 'tick', input: { tag }, overlap: 'allow', trigger });
      const runs = await poll(() => runsOf(definitionId), (rs) => rs.some((r) => r.state === 'succeeded'), `a ${trigger.kind} run succeeds`);
      await remove(definitionId);
      const run = runs.find((r) => r.state === 'succeeded')!;
      assert.equal(run.cause, 'schedule');
      assert.equal(run.attempts, 1);
      assert.deepEqual(run.output.run, { id: run.id, cause: 'schedule', scheduledFor: run.scheduledFor, attempt: 1 });
      if (trigger.kind === 'cron') assert.equal(Date.parse(run.scheduledFor) % 1_000, 0, 'a cron fire time is on the second');
      assert.equal((await marks()).filter((m) => m.note === `${tag} ${run.id}`).length, 1, 'its write is committed');
    }
  });

  it('an EventConsumer runs once per created row with ctx.event (names only) and reads the row through its grants', async () => {
    await publishJob(c, 'onOrder', `export default async function (ctx) {
      const row = await ctx.db.orders.get(ctx.event.data.entityId);
      return { event: ctx.event, amount: row.data.amount, cause: ctx.run.cause };
    }`, 'EventConsumer', ['entity:Order:read']);
    const { definitionId } = await createTask(c, { handler: 'onOrder', overlap: 'queue', trigger: { kind: 'event', entity: 'Order', kinds: ['created'] } });
    const amounts = [987_601, 987_602, 987_603];
    const ids: string[] = [];
    for (const amount of amounts) {
      const r = await c.post('/api/orders', { amount });
      expectStatus(r, 201);
      ids.push(r.body.data.id);
    }
    const runs = await poll(() => runsOf(definitionId), (rs) => rs.length >= 3 && rs.every((r) => FINISHED.includes(r.state)), 'three event runs finish');
    assert.equal(runs.length, 3, 'one run per created row');
    assert.deepEqual(runs.map((r) => r.state), ['succeeded', 'succeeded', 'succeeded'], JSON.stringify(runs.map((r) => r.error)));
    const byRow = new Map(runs.map((r) => [r.output.event.data.entityId, r]));
    for (const [i, id] of ids.entries()) {
      const r = byRow.get(id);
      assert.ok(r !== undefined, `a run for row ${id}`);
      assert.equal(r.output.cause, 'event');
      assert.equal(r.output.amount, amounts[i], 'the row read through ctx.db');
      assert.equal(r.output.event.id, r.eventId);
      assert.equal(r.output.event.type, 'entity.Order.created');
      assert.ok(!JSON.stringify(r.output.event).includes(String(amounts[i])), 'the event carries names only, no row values');
      assert.equal(r.output.event.data.amount, undefined);
    }
    await remove(definitionId);
  });

  it('a WebhookHandler gets ctx.webhook.payload', async () => {
    await publishJob(c, 'onHook', 'export default async function (ctx) { return ctx.webhook; }', 'WebhookHandler');
    const rec = await c.post('/api/webhooks/receivers', { name: 'payments', signingSecret: SECRET });
    expectStatus(rec, 201);
    const receiver = rec.body.data;
    const { definitionId } = await createTask(c, { handler: 'onHook', trigger: { kind: 'webhook', receiverId: receiver.id } });
    const payload = JSON.stringify({ id: 'evt_e2e', type: 'payment.succeeded', data: { amount: 12, currency: 'eur' } });
    const sent = await new Client(server.url).post(`/api/webhooks/inbound/${receiver.publicReceiverKey}`, payload,
      { 'service-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) }) });
    expectStatus(sent, 202);
    const [queued] = await runsOf(definitionId);
    assert.equal(queued.cause, 'webhook');
    const run = await finished(queued.id);
    assert.equal(run.state, 'succeeded', JSON.stringify(run.error));
    assert.deepEqual(run.output.payload, { amount: 12, currency: 'eur' });
    assert.equal(run.output.receiverId, receiver.id);
    assert.equal(run.output.type, 'payment.succeeded');
    await remove(definitionId);
  });

  it('a write without its grant is refused inside the handler: the attempt and the run fail with the error; task.run.* reach GET /api/events', async () => {
    await publishJob(c, 'readOnly', 'export default async function (ctx) { await ctx.db.marks.create({ note: "forbidden" }); return 1; }', 'ScheduledJob', ['entity:Mark:read']);
    await publishJob(c, 'fine', 'export default async function () { return 2; }');
    const bad = await createTask(c, { handler: 'readOnly', retry: { maxAttempts: 1 } });
    const good = await createTask(c, { handler: 'fine' });
    const trigger = async (id: string): Promise<any> => controlData(await c.post(`/api/scheduling/taskrun/${id}/trigger`, {}), 202, 'TaskRun', 'queued');
    const failed = await finished((await trigger(bad.definitionId)).id);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.attempts, 1);
    assert.equal(failed.error.code, 'ACCESS_DENIED', JSON.stringify(failed.error));
    const attempts = controlData(await c.get(`/api/scheduling/taskattempt?runId=${failed.id}`), 200, 'TaskAttempt', 'listed');
    assert.deepEqual(attempts.map((a: any) => a.state), ['failed']);
    assert.equal(attempts[0].error.code, 'ACCESS_DENIED');
    assert.equal((await marks()).filter((m) => m.note === 'forbidden').length, 0);
    const succeeded = await finished((await trigger(good.definitionId)).id);
    assert.equal(succeeded.state, 'succeeded');

    const filter = encodeURIComponent(JSON.stringify({ entity: 'TaskRun' }));
    const events = await poll(async () => controlDataList(await c.get(`/api/events?pageSize=200&filter=${filter}`)),
      (es) => es.some((e) => e.data.entityId === failed.id) && es.some((e) => e.data.entityId === succeeded.id), 'task.run.* in the event log', 5_000);
    assert.equal(events.find((e) => e.data.entityId === failed.id)!.type, 'task.run.failed');
    assert.equal(events.find((e) => e.data.entityId === succeeded.id)!.type, 'task.run.succeeded');
    // The log pages oldest first: walking `next` from the start finds them too.
    const walked = await walkEvents(c);
    assert.equal(walked.filter((e) => e.data.entityId === succeeded.id && e.type === 'task.run.succeeded').length, 1);
    assert.equal(walked.filter((e) => e.data.entityId === failed.id && e.type === 'task.run.failed').length, 1);
  });

  it('DELETE of a definition cancels its queued runs; they stay readable', async () => {
    // Each run's first attempt fails and its retry is an hour away: the runs wait, queued.
    await publishJob(c, 'laterJob', 'export default async function () { throw new Error("later"); }');
    const { definitionId } = await createTask(c, { handler: 'laterJob', overlap: 'allow', retry: { maxAttempts: 2, backoffSeconds: 3_600, maxBackoffSeconds: 3_600 } });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push(controlData(await c.post(`/api/scheduling/taskrun/${definitionId}/trigger`, {}), 202, 'TaskRun', 'queued').id);
    for (const id of ids) await poll(() => readRun(id), (r) => r.state === 'queued' && r.attempts === 1, `run ${id} waits for its retry`);
    await remove(definitionId);
    for (const id of ids) {
      const r = await readRun(id);
      assert.equal(r.state, 'cancelled');
      assert.equal(r.definitionId, definitionId);
      assert.ok(r.finishedAt !== undefined);
      assert.equal(controlData(await c.get(`/api/scheduling/taskattempt?runId=${id}`), 200, 'TaskAttempt', 'listed').length, 1);
    }
  });

  it('every scheduling and TriggerAudit route answers (not the catch-all 404) and is in the OpenAPI document with its operation id', async () => {
    const id = randomUUID();
    // [method, path as routed, path in the document, operation id]
    const ROUTES: Array<[string, string, string, string]> = [
      ['GET', DEFINITIONS, '/scheduling/taskdefinition', 'ControlPlane.TaskDefinition.List'],
      ['POST', DEFINITIONS, '/scheduling/taskdefinition', 'ControlPlane.TaskDefinition.Create'],
      ['GET', `${DEFINITIONS}/${id}`, '/scheduling/taskdefinition/{id}', 'ControlPlane.TaskDefinition.Read'],
      ['PUT', `${DEFINITIONS}/${id}`, '/scheduling/taskdefinition/{id}', 'ControlPlane.TaskDefinition.Update'],
      ['DELETE', `${DEFINITIONS}/${id}`, '/scheduling/taskdefinition/{id}', 'ControlPlane.TaskDefinition.Delete'],
      ['POST', `${DEFINITIONS}/${id}/pause`, '/scheduling/taskdefinition/{id}/pause', 'ControlPlane.TaskDefinition.Pause'],
      ['POST', `${DEFINITIONS}/${id}/resume`, '/scheduling/taskdefinition/{id}/resume', 'ControlPlane.TaskDefinition.Resume'],
      ['GET', `${DEFINITIONS}/${id}/triggers`, '/scheduling/taskdefinition/{id}/triggers', 'ControlPlane.TaskTrigger.List'],
      ['POST', `${DEFINITIONS}/${id}/triggers`, '/scheduling/taskdefinition/{id}/triggers', 'ControlPlane.TaskTrigger.Create'],
      ['DELETE', `${DEFINITIONS}/${id}/triggers/${id}`, '/scheduling/taskdefinition/{id}/triggers/{triggerId}', 'ControlPlane.TaskTrigger.Delete'],
      ['GET', '/api/scheduling/taskrun', '/scheduling/taskrun', 'ControlPlane.TaskRun.List'],
      ['GET', `/api/scheduling/taskrun/${id}`, '/scheduling/taskrun/{id}', 'ControlPlane.TaskRun.Read'],
      ['POST', `/api/scheduling/taskrun/${id}/trigger`, '/scheduling/taskrun/{definitionId}/trigger', 'ControlPlane.TaskRun.Trigger'],
      ['POST', `/api/scheduling/taskrun/${id}/cancel`, '/scheduling/taskrun/{id}/cancel', 'ControlPlane.TaskRun.Cancel'],
      ['GET', `/api/scheduling/taskattempt?runId=${id}`, '/scheduling/taskattempt', 'ControlPlane.TaskAttempt.List'],
      ['GET', `/api/scheduling/taskattempt/${id}`, '/scheduling/taskattempt/{id}', 'ControlPlane.TaskAttempt.Read'],
      ['GET', '/api/TriggerAudit/Events', '/TriggerAudit/Events', 'ControlPlane.TriggerAudit.Events'],
      ['GET', '/api/TriggerAudit/Summary', '/TriggerAudit/Summary', 'ControlPlane.TriggerAudit.Summary'],
      ['GET', '/api/TriggerAudit/Diagnostics', '/TriggerAudit/Diagnostics', 'ControlPlane.TriggerAudit.Diagnostics'],
      ['DELETE', '/api/TriggerAudit/Clear', '/TriggerAudit/Clear', 'ControlPlane.TriggerAudit.Clear'],
    ];
    assert.equal(ROUTES.length, 20);
    const unrouted: string[] = [];
    for (const [method, path] of ROUTES) {
      const r = await c.request(method, path, method === 'POST' || method === 'PUT' ? {} : undefined);
      assert.ok(r.status < 500, `${method} ${path} answered ${r.status} ${r.text.slice(0, 200)}`);
      const reason = r.body?.error?.reasonCode;
      if (reason === 'Platform.NotFound' || reason === 'Route.Unknown' || reason === 'Route.MethodNotAllowed') unrouted.push(`${method} ${path}: ${reason}`);
    }
    assert.deepEqual(unrouted, []);
    const doc = await c.get('/api/openapi.json');
    expectStatus(doc, 200);
    const paths = doc.body.paths as Record<string, Record<string, { operationId?: string }>>;
    const missing: string[] = [];
    for (const [method, , docPath, operationId] of ROUTES) {
      const found = Object.entries(paths).find(([p]) => p.replace(/\{[^}]+\}/g, '{}') === docPath.replace(/\{[^}]+\}/g, '{}'));
      const op = found?.[1][method.toLowerCase()];
      if (op?.operationId !== operationId) missing.push(`${method} ${docPath}: ${found === undefined ? 'no path' : op === undefined ? 'no method' : op.operationId}`);
    }
    assert.deepEqual(missing, []);
  });

  it('definitions, runs and TriggerAudit events page alike: page { number, size, next? }, walking next visits each item once', async () => {
    await publishJob(c, 'pager', 'export default async function () { return 3; }');
    const defs: string[] = [];
    for (let i = 0; i < 3; i++) defs.push((await createTask(c, { handler: 'pager', overlap: 'allow' })).definitionId);
    const runIds: string[] = [];
    for (let i = 0; i < 5; i++) runIds.push(controlData(await c.post(`/api/scheduling/taskrun/${defs[0]}/trigger`, {}), 202, 'TaskRun', 'queued').id);
    const lists: Array<[string, (item: any) => string]> = [
      [`${DEFINITIONS}?`, (d) => d.id],
      [`/api/scheduling/taskrun?definitionId=${defs[0]}&`, (r) => r.id],
      [`/api/TriggerAudit/Events?definitionId=${defs[0]}&`, (e) => e.runId],
    ];
    for (const [base, key] of lists) {
      const all = await c.get(`${base}pageSize=200`);
      expectStatus(all, 200);
      assert.deepEqual(all.body.page, { number: 1, size: 200 }, `${base}: the last page has no next`);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let n = 1; n <= 50; n++) {
        const r = await c.get(`${base}pageSize=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
        expectStatus(r, 200);
        const page = r.body.page;
        assert.deepEqual(Object.keys(page).sort(), page.next === undefined ? ['number', 'size'] : ['next', 'number', 'size'], `${base}: page ${JSON.stringify(page)}`);
        assert.equal(page.size, 2);
        assert.equal(typeof page.number, 'number');
        assert.ok(r.body.data.length <= 2);
        seen.push(...r.body.data.map(key));
        cursor = page.next;
        if (cursor === undefined) break;
      }
      assert.equal(new Set(seen).size, seen.length, `${base}: no item twice`);
      assert.deepEqual([...seen].sort(), all.body.data.map(key).sort(), `${base}: every item once`);
    }
    for (const id of runIds) assert.ok((await c.get(`/api/scheduling/taskrun?definitionId=${defs[0]}&pageSize=200`)).body.data.some((r: any) => r.id === id));
    for (const id of defs) await remove(id);
  });
});

/** The data of `GET /api/events` (an entity-style list, not the control-plane envelope). */
function controlDataList(r: { status: number; body: any; text: string }): any[] {
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

/** Every event of the project, walking `page.next` from the start. */
async function walkEvents(c: Client): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const r = await c.get(`/api/events?pageSize=50${cursor === undefined ? '' : `&cursor=${cursor}`}`);
    out.push(...controlDataList(r));
    cursor = r.body.page.next;
    if (cursor === undefined) return out;
  }
  assert.fail('the event log did not end within 100 pages');
}
