/**
 * The run engine over real HTTP (CONTRACT "Scheduling"): a manual trigger runs a
 * ScheduledJob as the service profile, its ctx.db writes committed with the
 * attempt's success; failures are retried to maxAttempts and write nothing; a
 * timeout ends an attempt `timedOut`; a cancel stops a running attempt within
 * 1 s and rolls its writes back; idempotent triggers; task.run.* events; a lost
 * attempt is reaped and retried.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect.js';
import { controlData, newSlug } from '../control/support.js';
import { createTask, pauseDefinition, seedLostAttempt, type TaskOptions } from './support.js';

const MARK = { entityName: 'Mark', fields: [{ name: 'note', type: 'String', nullable: true }] };

forEachBackend('scheduling: run engine', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  let ids: { tenantId: string; projectId: string };
  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    c = p.client;
    ids = { tenantId: p.tenantId, projectId: p.projectId };
    await defineEntity(c, MARK);
  });
  after(async () => {
    await server?.close();
  });

  async function job(name: string, code: string, def: Omit<TaskOptions, 'handler'> = {}): Promise<string> {
    const path = `jobs/${name}.js`;
    controlData(await c.post('/api/SourceAsset/file', { path, content: code }), 201);
    controlData(await c.post('/api/Schema/handlers', { name, surface: 'ScheduledJob', source: path, grants: ['entity:Mark:*'] }), 201);
    return (await createTask(c, { handler: name, ...def })).definitionId;
  }
  const trigger = async (definitionId: string, body: unknown = {}, headers?: Record<string, string>): Promise<any> =>
    controlData(await c.post(`/api/scheduling/taskrun/${definitionId}/trigger`, body, headers), 202, 'TaskRun', 'queued');
  const attempts = async (runId: string): Promise<any[]> => controlData(await c.get(`/api/scheduling/taskattempt?runId=${runId}`), 200, 'TaskAttempt', 'listed');
  const run = async (runId: string): Promise<any> =>
    (await server.node.services.db.query<any>('SELECT state, attempts, output, error FROM plinth.task_runs WHERE id = $1', [runId])).rows[0];
  async function until(runId: string, states: string[], ms = 15_000): Promise<any> {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await run(runId);
      if (states.includes(r.state)) return r;
      if (Date.now() > deadline) assert.fail(`run ${runId} is ${r.state}, not ${states.join('|')}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  const marks = async (note: string): Promise<number> => {
    const r = await c.get('/api/marks?pageSize=200');
    assert.equal(r.status, 200, r.text);
    return (r.body.data as any[]).filter((m) => m.note === note).length;
  };

  it('runs a manual trigger: the write commits, run and attempt succeed, output is the return value, ctx.run is seen', async () => {
    const note = randomUUID();
    const def = await job('okJob', 'export default async function (ctx, input) { await ctx.db.marks.create({ note: input.note }); return { run: ctx.run, input }; }');
    const queued = await trigger(def, { input: { note } });
    assert.equal(queued.cause, 'manual');
    assert.equal(queued.triggerId, null);
    const done = await until(queued.id, ['succeeded', 'failed']);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.deepEqual(done.output.input, { note });
    assert.deepEqual(done.output.run, { id: queued.id, cause: 'manual', scheduledFor: queued.scheduledFor, attempt: 1 });
    assert.equal(await marks(note), 1);
    const audit = await server.node.services.db.query<any>('SELECT trigger_id, decision FROM plinth.trigger_audit WHERE run_id = $1', [queued.id]);
    assert.deepEqual(audit.rows, [{ trigger_id: null, decision: 'started' }]);
    const [a] = await attempts(queued.id);
    assert.equal(a.state, 'succeeded');
    assert.equal(a.number, 1);
    assert.deepEqual(controlData(await c.get(`/api/scheduling/taskattempt/${a.id}`), 200, 'TaskAttempt', 'read'), a);
    // Its event reaches the event log: on the first page of GET /api/events, and under the filter `entity: TaskRun`.
    // The outbox relays it after the commit: poll.
    const deadline = Date.now() + 5_000;
    const byEntity = `/api/events?pageSize=200&filter=${encodeURIComponent(JSON.stringify({ entity: 'TaskRun' }))}`;
    for (;;) {
      const page = await c.get('/api/events?pageSize=200');
      assert.equal(page.status, 200, page.text);
      const ev = (page.body.data as any[]).filter((e) => e.type === 'task.run.succeeded' && e.data.entityId === queued.id);
      if (ev.length === 1) {
        assert.equal(ev[0].data.entity, 'TaskRun');
        assert.equal(page.body.page.next, undefined, 'the whole log is on this page');
        const filtered = await c.get(byEntity);
        assert.deepEqual((filtered.body.data as any[]).filter((e) => e.data.entityId === queued.id), ev);
        break;
      }
      assert.ok(Date.now() < deadline, 'task.run.succeeded is in the event log');
      await new Promise((res) => setTimeout(res, 100));
    }
    // A finished run cannot be cancelled.
    expectError(await c.post(`/api/scheduling/taskrun/${queued.id}/cancel`), 409, 'CONFLICT', 'TaskRun.Finished');
  });

  it('retries a throwing handler to maxAttempts, then fails the run; nothing is written', async () => {
    const note = randomUUID();
    const def = await job('badJob', `export default async function (ctx) { await ctx.db.marks.create({ note: '${note}' }); throw new Error('boom'); }`,
      { retry: { maxAttempts: 3, backoffSeconds: 0, maxBackoffSeconds: 0 } });
    const queued = await trigger(def);
    const done = await until(queued.id, ['failed', 'succeeded']);
    assert.equal(done.state, 'failed');
    assert.equal(done.attempts, 3);
    assert.equal(done.error.reasonCode, 'Handler.Threw');
    assert.deepEqual((await attempts(queued.id)).map((a) => [a.number, a.state]), [[1, 'failed'], [2, 'failed'], [3, 'failed']]);
    assert.equal(await marks(note), 0);
  });

  it('ends an attempt past timeoutSeconds as timedOut', async () => {
    const def = await job('loopJob', 'export default async function () { for (;;) {} }', { timeoutSeconds: 1, retry: { maxAttempts: 1, backoffSeconds: 0, maxBackoffSeconds: 0 } });
    const queued = await trigger(def);
    const done = await until(queued.id, ['failed', 'succeeded'], 10_000);
    assert.equal(done.state, 'failed');
    assert.deepEqual((await attempts(queued.id)).map((a) => a.state), ['timedOut']);
  });

  it('cancels a running attempt within 1 s and rolls its write back', async () => {
    const note = randomUUID();
    // PGlite holds one connection: a handler may not keep its transaction open while it loops, so there it writes last.
    const write = `await ctx.db.marks.create({ note: '${note}' });`;
    const loop = 'const end = Date.now() + 8000; while (Date.now() < end) {}';
    const body = backend === 'postgres' ? `${write} ${loop}` : `${loop} ${write}`;
    const def = await job('longJob', `export default async function (ctx) { ${body} return 1; }`);
    const queued = await trigger(def);
    await until(queued.id, ['running']);
    // Overlap `skip` (the default): no second manual run while one runs.
    expectError(await c.post(`/api/scheduling/taskrun/${def}/trigger`, {}), 409, 'CONFLICT', 'TaskRun.OverlapSkipped');
    if (backend === 'postgres') await new Promise((res) => setTimeout(res, 300)); // its write happened
    const asked = Date.now();
    const r = controlData(await c.post(`/api/scheduling/taskrun/${queued.id}/cancel`), 200, 'TaskRun');
    assert.equal(r.id, queued.id);
    const done = await until(queued.id, ['cancelled', 'succeeded', 'failed'], 5_000);
    assert.equal(done.state, 'cancelled');
    assert.ok(Date.now() - asked < 1_500, `cancelled after ${Date.now() - asked} ms`);
    assert.deepEqual((await attempts(queued.id)).map((a) => a.state), ['cancelled']);
    assert.equal(await marks(note), 0);
  });

  it('replays an Idempotency-Key; refuses paused and unknown definitions', async () => {
    const def = await job('keyJob', 'export default async function () { return 1; }', { overlap: 'allow' });
    const key = { 'idempotency-key': randomUUID() };
    const first = await trigger(def, {}, key);
    const again = await c.post(`/api/scheduling/taskrun/${def}/trigger`, {}, key);
    assert.equal(again.status, 202);
    assert.equal(again.body.data.id, first.id);
    const paused = (await createTask(c, { handler: 'keyJob', state: 'paused' })).definitionId;
    expectError(await c.post(`/api/scheduling/taskrun/${paused}/trigger`, {}), 409, 'CONFLICT', 'TaskDefinition.Paused');
    expectError(await c.post(`/api/scheduling/taskrun/${randomUUID()}/trigger`, {}), 404, 'NOT_FOUND', 'TaskDefinition.NotFound');
    expectError(await c.post('/api/scheduling/taskrun/nope/trigger', {}), 404, 'NOT_FOUND', 'TaskDefinition.NotFound');
    expectError(await c.post(`/api/scheduling/taskrun/${randomUUID()}/cancel`), 404, 'NOT_FOUND', 'TaskRun.NotFound');
    expectError(await c.get(`/api/scheduling/taskattempt/${randomUUID()}`), 404, 'NOT_FOUND', 'TaskAttempt.NotFound');
    expectError(await c.get('/api/scheduling/taskattempt?runId=nope'), 422, 'VALIDATION_FAILED', 'TaskAttempt.InvalidRunId', 'runId');
    // A queued run: its first attempt failed and its retry is an hour away, so no worker claims it first.
    const waiting = await job('retryLater', 'export default async function () { throw new Error(\'later\'); }',
      { retry: { maxAttempts: 2, backoffSeconds: 3_600, maxBackoffSeconds: 3_600 } });
    const queuedId = (await trigger(waiting)).id;
    const deadline = Date.now() + 15_000;
    while ((await attempts(queuedId)).length === 0 || (await run(queuedId)).state !== 'queued') {
      assert.ok(Date.now() < deadline, 'the run waits for its retry');
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(controlData(await c.post(`/api/scheduling/taskrun/${queuedId}/cancel`), 200, 'TaskRun', 'cancelled').state, 'cancelled');
    expectError(await c.post(`/api/scheduling/taskrun/${queuedId}/cancel`), 409, 'CONFLICT', 'TaskRun.Finished');
  });

  it('marks an attempt whose lease ran out lost and retries its run', async () => {
    const def = await job('lostJob', 'export default async function (ctx) { return ctx.run.attempt; }');
    const runId = await seedLostAttempt(server.node.services.db, ids, def);
    const done = await until(runId, ['succeeded', 'failed']);
    assert.equal(done.state, 'succeeded');
    assert.equal(done.output, 2);
    assert.deepEqual((await attempts(runId)).map((a) => [a.number, a.state]), [[1, 'lost'], [2, 'succeeded']]);
  });
});
