/**
 * CONTRACT "Scheduling": `/api/scheduling/taskdefinition` over real HTTP: create with defaults,
 * read, list (paged), full replacement, pause/resume, soft delete (404 after, queued runs
 * cancelled), every 422 with its reason code and field, 409 on a taken name, admin only.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData, projectUserToken } from '../control/support.js';
import { publishHandler } from '../authored/publish.js';
import { enqueueRun } from '../../runtime/scheduling/enqueue.js';
import { PLATFORM_SCHEMA } from '../../storage/index.js';
import { createDefinition, DEFINITIONS, publishJob, stopWorker } from './support.js';

const JOB = 'export default async (ctx, input) => ({ ok: true, input });';

forEachBackend('scheduling: task definitions', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  let projectId: string;
  let tenantId: string;
  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    c = p.client;
    projectId = p.projectId;
    tenantId = p.tenantId;
    await publishJob(c, 'nightly', JOB);
    await publishJob(c, 'onOrder', JOB, 'EventConsumer');
    await publishJob(c, 'onHook', JOB, 'WebhookHandler');
    await publishHandler(c, { name: 'plainOp', code: JOB });
  });
  after(async () => {
    await server?.close();
  });

  it('creates with CONTRACT defaults, reads it back and answers exactly the record', async () => {
    const d = await createDefinition(c, { name: 'nightly-report', handler: 'nightly' });
    assert.deepEqual(Object.keys(d).sort(), ['createdAt', 'handler', 'id', 'input', 'name', 'overlap', 'retry', 'state', 'timeoutSeconds', 'updatedAt']);
    assert.equal(d.name, 'nightly-report');
    assert.equal(d.handler, 'nightly');
    assert.equal(d.input, null);
    assert.equal(d.state, 'active');
    assert.deepEqual(d.retry, { maxAttempts: 3, backoffSeconds: 1, maxBackoffSeconds: 300 });
    assert.equal(d.timeoutSeconds, 60);
    assert.equal(d.overlap, 'skip');
    assert.ok(Date.parse(d.createdAt) > 0 && d.createdAt === d.updatedAt);
    assert.deepEqual(controlData(await c.get(`${DEFINITIONS}/${d.id}`), 200, 'TaskDefinition', 'read'), d);
    // Every background surface but no operation handler.
    const e = await createDefinition(c, { name: 'orders', handler: 'onOrder', input: { a: [1, 2] }, retry: { maxAttempts: 5 }, timeoutSeconds: 3600, overlap: 'allow' });
    assert.deepEqual(e.input, { a: [1, 2] });
    assert.deepEqual(e.retry, { maxAttempts: 5, backoffSeconds: 1, maxBackoffSeconds: 300 }, 'missing retry members are the defaults');
    assert.equal(e.overlap, 'allow');
    assert.equal((await createDefinition(c, { name: 'hooks', handler: 'onHook', retry: { maxAttempts: 1, backoffSeconds: 0, maxBackoffSeconds: 0 } })).retry.backoffSeconds, 0);
  });

  it('refuses every bad body with 422 VALIDATION_FAILED, its reason code and field', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ handler: 'nightly' }, 'TaskDefinition.InvalidName', 'name'],
      [{ name: '1abc', handler: 'nightly' }, 'TaskDefinition.InvalidName', 'name'],
      [{ name: 'a'.repeat(64), handler: 'nightly' }, 'TaskDefinition.InvalidName', 'name'],
      [{ name: 'x' }, 'TaskDefinition.HandlerInvalid', 'handler'],
      [{ name: 'x', handler: 'nothing' }, 'TaskDefinition.HandlerInvalid', 'handler'],
      [{ name: 'x', handler: 'plainOp' }, 'TaskDefinition.HandlerInvalid', 'handler'],
      [{ name: 'x', handler: 'nightly', retry: { maxAttempts: 0 } }, 'TaskDefinition.InvalidRetry', 'retry.maxAttempts'],
      [{ name: 'x', handler: 'nightly', retry: { maxAttempts: 101 } }, 'TaskDefinition.InvalidRetry', 'retry.maxAttempts'],
      [{ name: 'x', handler: 'nightly', retry: { backoffSeconds: -1 } }, 'TaskDefinition.InvalidRetry', 'retry.backoffSeconds'],
      [{ name: 'x', handler: 'nightly', retry: { maxBackoffSeconds: 1.5 } }, 'TaskDefinition.InvalidRetry', 'retry.maxBackoffSeconds'],
      [{ name: 'x', handler: 'nightly', retry: { tries: 2 } }, 'TaskDefinition.UnknownProperty', 'retry.tries'],
      [{ name: 'x', handler: 'nightly', timeoutSeconds: 0 }, 'TaskDefinition.InvalidTimeout', 'timeoutSeconds'],
      [{ name: 'x', handler: 'nightly', timeoutSeconds: 3601 }, 'TaskDefinition.InvalidTimeout', 'timeoutSeconds'],
      [{ name: 'x', handler: 'nightly', overlap: 'sometimes' }, 'TaskDefinition.InvalidOverlap', 'overlap'],
      [{ name: 'x', handler: 'nightly', schedule: '* * * * *' }, 'TaskDefinition.UnknownProperty', 'schedule'],
      [{ name: 'x', handler: 'nightly', input: 'y'.repeat(256 * 1024) }, 'TaskDefinition.InputTooLarge', 'input'],
    ];
    for (const [body, reason, field] of cases) {
      expectError(await c.post(DEFINITIONS, body), 422, 'VALIDATION_FAILED', reason, field);
    }
    expectError(await c.post(DEFINITIONS, [1]), 422, 'VALIDATION_FAILED', 'TaskDefinition.InvalidBody');
    // PUT takes the same body and the same checks.
    const d = await createDefinition(c, { name: 'checked', handler: 'nightly' });
    expectError(await c.put(`${DEFINITIONS}/${d.id}`, { name: 'checked', handler: 'plainOp' }), 422, 'VALIDATION_FAILED', 'TaskDefinition.HandlerInvalid', 'handler');
  });

  it('a taken name is 409 on create and on rename; PUT replaces the whole body and keeps the state', async () => {
    const a = await createDefinition(c, { name: 'taken', handler: 'nightly' });
    const b = await createDefinition(c, { name: 'free', handler: 'nightly', overlap: 'queue', input: { x: 1 } });
    expectError(await c.post(DEFINITIONS, { name: 'taken', handler: 'onOrder' }), 409, 'CONFLICT', 'TaskDefinition.NameTaken', 'name');
    expectError(await c.put(`${DEFINITIONS}/${b.id}`, { name: 'taken', handler: 'nightly' }), 409, 'CONFLICT', 'TaskDefinition.NameTaken', 'name');
    controlData(await c.post(`${DEFINITIONS}/${b.id}/pause`), 200, 'TaskDefinition', 'paused');
    const put = controlData(await c.put(`${DEFINITIONS}/${b.id}`, { name: 'renamed', handler: 'onHook', timeoutSeconds: 5 }), 200, 'TaskDefinition', 'updated');
    assert.equal(put.name, 'renamed');
    assert.equal(put.handler, 'onHook');
    assert.equal(put.overlap, 'skip', 'an omitted member returns to its default');
    assert.equal(put.input, null);
    assert.equal(put.timeoutSeconds, 5);
    assert.equal(put.state, 'paused', 'PUT does not resume');
    assert.ok(put.updatedAt >= b.updatedAt);
    // The old name is free again; deleting frees a name too.
    await createDefinition(c, { name: 'free', handler: 'nightly' });
    expectStatus(await c.delete(`${DEFINITIONS}/${a.id}`), 204);
    await createDefinition(c, { name: 'taken', handler: 'nightly' });
  });

  it('pause and resume set the state, idempotently', async () => {
    const d = await createDefinition(c, { name: 'pausable', handler: 'nightly' });
    const p1 = controlData(await c.post(`${DEFINITIONS}/${d.id}/pause`), 200, 'TaskDefinition', 'paused');
    assert.equal(p1.state, 'paused');
    const p2 = controlData(await c.post(`${DEFINITIONS}/${d.id}/pause`), 200, 'TaskDefinition', 'paused');
    assert.deepEqual(p2, p1, 'pausing a paused definition changes nothing');
    assert.equal(controlData(await c.get(`${DEFINITIONS}/${d.id}`), 200).state, 'paused');
    const r = controlData(await c.post(`${DEFINITIONS}/${d.id}/resume`), 200, 'TaskDefinition', 'resumed');
    assert.equal(r.state, 'active');
    assert.equal(controlData(await c.post(`${DEFINITIONS}/${d.id}/resume`), 200).state, 'active');
  });

  it('lists in name order, paged with a cursor', async () => {
    const names = ['page-a', 'page-b', 'page-c'];
    for (const name of names) await createDefinition(c, { name, handler: 'nightly' });
    const all = await c.get(`${DEFINITIONS}?pageSize=200`);
    expectStatus(all, 200);
    assert.deepEqual(Object.keys(all.body).sort(), ['correlationId', 'data', 'page', 'state', 'surface']);
    const listed: string[] = all.body.data.map((d: any) => d.name);
    assert.deepEqual(listed, [...listed].sort());
    assert.equal(all.body.page.next, undefined);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const r = await c.get(`${DEFINITIONS}?pageSize=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expectStatus(r, 200);
      assert.ok(r.body.data.length <= 2);
      seen.push(...r.body.data.map((d: any) => d.name));
      cursor = r.body.page.next;
      if (cursor === undefined) break;
    }
    assert.deepEqual(seen, listed);
    for (const name of names) assert.ok(seen.includes(name));
    expectError(await c.get(`${DEFINITIONS}?pageSize=0`), 422, 'VALIDATION_FAILED', 'Query.InvalidPageSize', 'pageSize');
    expectError(await c.get(`${DEFINITIONS}?cursor=${Buffer.from('1 bad').toString('base64url')}`), 422, 'VALIDATION_FAILED', 'Query.InvalidCursor', 'cursor');
  });

  it('an unknown, malformed or deleted id is 404 on every route', async () => {
    const d = await createDefinition(c, { name: 'doomed', handler: 'nightly' });
    expectStatus(await c.delete(`${DEFINITIONS}/${d.id}`), 204);
    for (const id of [d.id, randomUUID(), 'not-a-uuid']) {
      const routes: Array<[string, string, unknown]> = [
        ['GET', `${DEFINITIONS}/${id}`, undefined], ['PUT', `${DEFINITIONS}/${id}`, { name: 'doomed2', handler: 'nightly' }],
        ['DELETE', `${DEFINITIONS}/${id}`, undefined], ['POST', `${DEFINITIONS}/${id}/pause`, undefined], ['POST', `${DEFINITIONS}/${id}/resume`, undefined],
        ['GET', `${DEFINITIONS}/${id}/triggers`, undefined], ['POST', `${DEFINITIONS}/${id}/triggers`, { kind: 'interval', intervalSeconds: 5 }],
        ['DELETE', `${DEFINITIONS}/${id}/triggers/${randomUUID()}`, undefined],
      ];
      for (const [method, path, body] of routes) expectError(await c.request(method, path, body), 404, 'NOT_FOUND', 'TaskDefinition.NotFound');
    }
    const listed = await c.get(`${DEFINITIONS}?pageSize=200`);
    assert.ok(!listed.body.data.some((x: any) => x.id === d.id), 'a deleted definition is not listed');
  });

  it('delete cancels the queued runs of the definition and no other', async () => {
    const d = await createDefinition(c, { name: 'with-runs', handler: 'nightly', overlap: 'allow' });
    const other = await createDefinition(c, { name: 'bystander', handler: 'nightly', overlap: 'allow' });
    // The worker would claim and run these runs before the DELETE: this suite needs none to run after here.
    await stopWorker(server);
    const db = server.node.services.db;
    const queue = async (defId: string): Promise<string> => {
      const out = await enqueueRun(db, {
        definition: { id: defId, tenantId, projectId, branch: 'main', overlap: 'allow', retry: { maxAttempts: 3, backoffSeconds: 1, maxBackoffSeconds: 300 } },
        triggerId: null, cause: 'manual', scheduledFor: new Date(Date.now() + 3_600_000), input: null, correlationId: randomUUID(),
      });
      assert.equal(out.decision, 'started');
      return out.decision === 'started' ? out.run.id : '';
    };
    const mine = [await queue(d.id), await queue(d.id)];
    const theirs = await queue(other.id);
    expectStatus(await c.delete(`${DEFINITIONS}/${d.id}`), 204);
    const states = async (ids: string[]) => (await db.query<{ state: string; finished_at: unknown }>(
      `SELECT state, finished_at FROM ${PLATFORM_SCHEMA}.task_runs WHERE id = ANY($1::uuid[])`, [ids])).rows;
    for (const r of await states(mine)) {
      assert.equal(r.state, 'cancelled');
      assert.notEqual(r.finished_at, null);
    }
    assert.equal((await states([theirs]))[0]!.state, 'queued');
  });

  it('is scoped by branch (X-Service-Branch): another branch neither sees nor reaches main\'s definitions', async () => {
    const d = await createDefinition(c, { name: 'branchy', handler: 'nightly' });
    controlData(await c.post('/api/branches', { name: 'feature-1' }), 201, 'Branch', 'created');
    const feat = c.with({ branch: 'feature-1' });
    const listed = await feat.get(`${DEFINITIONS}?pageSize=200`);
    expectStatus(listed, 200);
    assert.deepEqual(listed.body.data, [], 'the new branch has no definitions');
    expectError(await feat.get(`${DEFINITIONS}/${d.id}`), 404, 'NOT_FOUND', 'TaskDefinition.NotFound');
    expectError(await feat.post(`${DEFINITIONS}/${d.id}/pause`), 404, 'NOT_FOUND', 'TaskDefinition.NotFound');
    // Names are unique per branch: the branch may take main's name (its publication has main's handlers).
    const f = controlData(await feat.post(DEFINITIONS, { name: 'branchy', handler: 'nightly' }), 201);
    assert.notEqual(f.id, d.id);
    assert.equal(controlData(await c.get(`${DEFINITIONS}/${d.id}`), 200).state, 'active');
  });

  it('every spec route is routed under /api and /v1', async () => {
    const id = randomUUID();
    const routes: Array<[string, string]> = [
      ['GET', ''], ['POST', ''], ['GET', `/${id}`], ['PUT', `/${id}`], ['DELETE', `/${id}`], ['POST', `/${id}/pause`], ['POST', `/${id}/resume`],
      ['GET', `/${id}/triggers`], ['POST', `/${id}/triggers`], ['DELETE', `/${id}/triggers/${id}`],
    ];
    const unrouted: string[] = [];
    for (const base of ['/api', '/v1']) {
      for (const [method, tail] of routes) {
        const r = await c.request(method, `${base}/scheduling/taskdefinition${tail}`, method === 'POST' || method === 'PUT' ? {} : undefined);
        assert.ok(r.status < 500, `${method} ${base}${tail} answered ${r.status} ${r.text.slice(0, 200)}`);
        const reason = r.body?.error?.reasonCode;
        if (reason === 'Route.Unknown' || reason === 'Route.MethodNotAllowed') unrouted.push(`${method} ${base}${tail}`);
      }
    }
    assert.deepEqual(unrouted, []);
  });

  it('is the platform admin\'s only: 401 without a credential, 403 for a project user', async () => {
    const anon = c.with({ token: null });
    expectStatus(await anon.get(DEFINITIONS), 401);
    expectStatus(await anon.post(DEFINITIONS, { name: 'x', handler: 'nightly' }), 401);
    const user = c.with({ token: await projectUserToken(c) });
    for (const [method, path, body] of [['GET', DEFINITIONS, undefined], ['POST', DEFINITIONS, { name: 'x', handler: 'nightly' }]] as const) {
      const r = await user.request(method, path, body);
      expectStatus(r, 403);
      assert.equal(r.body.error.code, 'ACCESS_DENIED');
    }
  });
});
