/**
 * The run engine's batched paths (runtime/scheduling/claim.ts claimRuns,
 * success-batch.ts): a burst of manual triggers of a job that writes nothing
 * is claimed several runs per statement and ended several per statement, each
 * run exactly once (one attempt, its own output, one `task.run.succeeded`
 * event); serial runs still go one at a time; and a batched success is fenced
 * like a transactional one: an attempt marked lost meanwhile commits nothing.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData, newSlug } from '../control/support.js';
import { SuccessBatch } from '../../runtime/scheduling/success-batch.js';
import { createDefinition, pauseDefinition } from './support.js';

forEachBackend('scheduling: batched claims and successes', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  let ids: { tenantId: string; projectId: string };
  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    c = p.client;
    ids = { tenantId: p.tenantId, projectId: p.projectId };
  });
  after(async () => {
    await server?.close();
  });

  async function job(name: string, code: string, def: Record<string, unknown> = {}): Promise<string> {
    const path = `jobs/${name}.js`;
    controlData(await c.post('/api/SourceAsset/file', { path, content: code }), 201);
    controlData(await c.post('/api/Schema/handlers', { name, surface: 'ScheduledJob', source: path }), 201);
    return (await createDefinition(c, { name: `${name}Task`, handler: name, ...def })).id;
  }
  const trigger = async (definitionId: string): Promise<string> =>
    controlData(await c.post(`/api/scheduling/taskrun/${definitionId}/trigger`, {}), 202, 'TaskRun', 'queued').id;
  const db = (): TestServer['node']['services']['db'] => server.node.services.db;
  async function settled(definitionId: string, count: number): Promise<any[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await db().query<any>(`SELECT id, state, attempts, output, error, started_at, finished_at FROM plinth.task_runs WHERE definition_id = $1`, [definitionId]);
      if (r.rows.length === count && r.rows.every((x) => x.state !== 'queued' && x.state !== 'running')) return r.rows;
      assert.ok(Date.now() < deadline, `runs of ${definitionId} still pending: ${JSON.stringify(r.rows.map((x) => x.state))}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it('runs a burst of non-serial runs exactly once each, with one succeeded event each', async () => {
    const def = await job('burstJob', 'export default async function (ctx) { return ctx.run.id; }', { overlap: 'allow' });
    const runIds = await Promise.all(Array.from({ length: 40 }, () => trigger(def)));
    const runs = await settled(def, 40);
    for (const r of runs) {
      assert.equal(r.state, 'succeeded');
      assert.equal(Number(r.attempts), 1);
      assert.equal(r.output, r.id);
    }
    const attempts = await db().query<any>(
      `SELECT run_id, count(*)::int AS n, bool_and(state = 'succeeded') AS ok FROM plinth.task_attempts WHERE run_id = ANY($1::uuid[]) GROUP BY run_id`, [runIds]);
    assert.equal(attempts.rows.length, 40);
    assert.ok(attempts.rows.every((a) => a.n === 1 && a.ok === true));
    const deadline = Date.now() + 5_000;
    for (;;) {
      const ev = await db().query<any>(
        `SELECT data->>'entityId' AS id, count(*)::int AS n FROM plinth.events WHERE type = 'task.run.succeeded' AND data->>'entityId' = ANY($1::text[]) GROUP BY 1`, [runIds]);
      if (ev.rows.length === 40) {
        assert.ok(ev.rows.every((e) => e.n === 1), 'one event per run');
        break;
      }
      assert.ok(Date.now() < deadline, `succeeded events: ${ev.rows.length} of 40`);
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  it('runs serial runs one at a time', async () => {
    const def = await job('serialJob', 'export default async function () { const end = Date.now() + 30; while (Date.now() < end); return 1; }', { overlap: 'queue' });
    for (let i = 0; i < 4; i++) await trigger(def);
    const runs = (await settled(def, 4)).sort((a, b) => new Date(a.started_at).getTime() - new Date(b.started_at).getTime());
    assert.ok(runs.every((r) => r.state === 'succeeded'), JSON.stringify(runs));
    for (let i = 1; i < runs.length; i++) assert.ok(new Date(runs[i].started_at) >= new Date(runs[i - 1].finished_at), 'no two serial runs overlapped');
  });

  it('fences a batched success: an attempt no longer running commits nothing', async () => {
    // Paused: no worker claims the hand-made runs below; the test ends them through its own SuccessBatch.
    const def = await job('fenceJob', 'export default async function () { return 1; }');
    await pauseDefinition(c, def);
    const seed = async (attemptState: string): Promise<{ runId: string; attemptId: string }> => {
      const runId = randomUUID();
      const attemptId = randomUUID();
      await db().query(
        `INSERT INTO plinth.task_runs (id, tenant_id, project_id, branch, definition_id, cause, scheduled_for, serial, max_attempts, state, attempts, correlation_id, started_at)
         VALUES ($1, $2, $3, 'main', $4, 'manual', now(), false, 3, 'running', 1, 'seeded', now())`,
        [runId, ids.tenantId, ids.projectId, def],
      );
      await db().query(`INSERT INTO plinth.task_attempts (id, run_id, project_id, number, node, lease_until, state) VALUES ($1, $2, $3, 1, 'elsewhere', now() + interval '1 minute', $4)`,
        [attemptId, runId, ids.projectId, attemptState]);
      return { runId, attemptId };
    };
    const lost = await seed('lost');
    const live = await seed('running');
    let kicks = 0;
    const batch = new SuccessBatch(() => db(), () => kicks++);
    const item = (s: { runId: string; attemptId: string }, output: unknown) => ({ ...s, output, correlationId: randomUUID(), publicationVersion: null });
    const [a, b] = await Promise.all([batch.end(item(lost, 'late')), batch.end(item(live, { ok: true }))]);
    assert.equal(a, false);
    assert.equal(b, true);
    assert.equal(kicks, 1);
    const state = async (runId: string): Promise<any> =>
      (await db().query<any>(`SELECT r.state, r.output, (SELECT count(*)::int FROM plinth.outbox o WHERE o.entity_id = r.id::text) + (SELECT count(*)::int FROM plinth.events e WHERE e.data->>'entityId' = r.id::text) AS events FROM plinth.task_runs r WHERE r.id = $1`, [runId])).rows[0];
    assert.deepEqual(await state(lost.runId), { state: 'running', output: null, events: 0 });
    assert.deepEqual(await state(live.runId), { state: 'succeeded', output: { ok: true }, events: 1 });
  });
});
