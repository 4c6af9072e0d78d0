/**
 * ScheduledJobScanner over a real server: time triggers (interval, 6-field cron,
 * once) fire on time, overlap `skip` and misfire are decided and audited, and a
 * restart across two fire times makes exactly one catch-up run. The node's
 * worker is stopped (stopWorker): runs stay `queued`.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapProject, Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { backdateTrigger, createTask, publishJob, stopWorker, type TaskOptions } from './support.js';
import { atLeast, decisionsOf, runsOf, sleep } from './scanner-support.js';

const ms = (iso: string): number => Date.parse(iso);
const JOB = 'export default async () => null;';

/** Consecutive runs `step` ms apart, each made within 1 s of its scheduledFor, all queued by the schedule. */
function assertOnTime(runs: any[], step: number): void {
  const sorted = [...runs].sort((a, b) => ms(a.scheduledFor) - ms(b.scheduledFor));
  for (const r of sorted) {
    assert.equal(r.cause, 'schedule');
    assert.equal(r.state, 'queued');
    const late = ms(r.createdAt) - ms(r.scheduledFor);
    assert.ok(late >= 0 && late < 1_000, `run ${r.id} made ${late} ms after its scheduledFor`);
  }
  for (let i = 1; i < sorted.length; i++) assert.equal(ms(sorted[i].scheduledFor) - ms(sorted[i - 1].scheduledFor), step);
}

forEachBackend('scheduler: time triggers', (backend: Backend) => {
  let server: TestServer;
  let client: Client;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    client = p.client;
    await stopWorker(server);
    await publishJob(client, 'job', JOB);
  });
  after(async () => {
    await server?.close();
  });
  const db = () => server.node.services.db;
  const task = (t: Omit<TaskOptions, 'handler'>) => createTask(client, { handler: 'job', ...t });
  const remove = async (definitionId: string): Promise<void> => expectStatus(await client.delete(`/api/scheduling/taskdefinition/${definitionId}`), 204);

  it('an interval of 1 s makes runs 1 s apart, each within 1 s of its time', async () => {
    const { definitionId } = await task({ overlap: 'allow', input: { n: 1 }, trigger: { kind: 'interval', intervalSeconds: 1 } });
    const runs = await atLeast(() => runsOf(client, definitionId), 3);
    assert.ok(runs.length >= 3, `${runs.length} runs`);
    assertOnTime(runs, 1_000);
    assert.deepEqual(runs[0].input, { n: 1 });
    const one = await client.get(`/api/scheduling/taskrun/${runs[0].id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.data, runs[0]);
    await remove(definitionId);
  });

  it('a 6-field cron */2 fires every 2 s, on time', async () => {
    const { definitionId } = await task({ overlap: 'allow', trigger: { kind: 'cron', cron: '*/2 * * * * *', timezone: 'UTC' } });
    const runs = await atLeast(() => runsOf(client, definitionId), 2, 10_000);
    assert.ok(runs.length >= 2, `${runs.length} runs`);
    assertOnTime(runs, 2_000);
    for (const r of runs) assert.equal(ms(r.scheduledFor) % 2_000, 0);
    await remove(definitionId);
  });

  it('a once trigger fires exactly once and is spent', async () => {
    const at = new Date(Date.now() + 700);
    const { definitionId, triggerId } = await task({ trigger: { kind: 'once', at: at.toISOString() } });
    const runs = await atLeast(() => runsOf(client, definitionId), 1);
    assertOnTime(runs, 0);
    assert.equal(ms(runs[0].scheduledFor), at.getTime());
    await sleep(1_200);
    assert.equal((await runsOf(client, definitionId)).length, 1);
    const t = (await db().query<{ next_fire_at: unknown; last_fire_at: unknown }>(`SELECT next_fire_at, last_fire_at FROM plinth.task_triggers WHERE id = $1`, [triggerId])).rows[0]!;
    assert.equal(t.next_fire_at, null);
    assert.equal(new Date(t.last_fire_at as string).getTime(), at.getTime());
  });

  it('overlap skip: a fire while a run is still queued is audited skippedOverlap', async () => {
    const { definitionId } = await task({ overlap: 'skip', trigger: { kind: 'interval', intervalSeconds: 1 } });
    const skipped = await atLeast(() => decisionsOf(client, definitionId, 'skippedOverlap'), 1);
    assert.ok(skipped.length >= 1);
    assert.equal(skipped[0].definitionId, definitionId);
    assert.equal(skipped[0].runId, undefined);
    const runs = await runsOf(client, definitionId);
    assert.equal(runs.length, 1, 'one run, the others skipped');
    const started = await decisionsOf(client, definitionId, 'started');
    assert.deepEqual(started.map((d) => d.runId), [runs[0].id]);
    await remove(definitionId);
  });

  it('misfire fireOnce: a fire 10 s late makes one run and a misfireCollapsed row; skip makes none and a misfireSkipped row', async () => {
    const late = new Date(Date.now() - 10_000);
    const once = await task({ trigger: { kind: 'interval', intervalSeconds: 3_600 }, misfire: 'fireOnce' });
    const skip = await task({ trigger: { kind: 'interval', intervalSeconds: 3_600 }, misfire: 'skip' });
    await backdateTrigger(db(), once.triggerId!, late);
    await backdateTrigger(db(), skip.triggerId!, late);
    await server.node.scheduler.scanNow();
    const runs = await runsOf(client, once.definitionId);
    assert.equal(runs.length, 1);
    assert.equal(ms(runs[0].scheduledFor), late.getTime());
    const collapsed = await decisionsOf(client, once.definitionId, 'misfireCollapsed');
    assert.equal(collapsed.length, 1);
    assert.equal(ms(collapsed[0].scheduledFor), late.getTime());
    assert.equal((await runsOf(client, skip.definitionId)).length, 0);
    const skipped = await decisionsOf(client, skip.definitionId);
    assert.deepEqual(skipped.map((d) => d.decision), ['misfireSkipped']);
    // Next fire: on the interval's grid, after now.
    const next = (await db().query<{ next_fire_at: string | Date }>(`SELECT next_fire_at FROM plinth.task_triggers WHERE id = $1`, [skip.triggerId])).rows[0]!;
    assert.equal(new Date(next.next_fire_at).getTime(), late.getTime() + 3_600_000);
  });
});

forEachBackend('scheduler: restart', (backend: Backend) => {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  after(async () => {
    // The first server owns the data (directory or database): it goes last.
    await second?.close();
    await first?.close();
  });

  it('a restart across two fire times makes exactly one catch-up run', async () => {
    first = await startServer({ backend, persistent: true });
    const p = await bootstrapProject(first.url, first.adminToken);
    await stopWorker(first);
    await publishJob(p.client, 'job', JOB);
    const { definitionId } = await createTask(p.client, { handler: 'job', overlap: 'allow', trigger: { kind: 'interval', intervalSeconds: 2 } });
    await atLeast(() => runsOf(p.client, definitionId), 1);
    await first.stop();
    const stoppedAt = Date.now();
    await sleep(4_500);
    second = await startServer({ backend, reuse: { dataDir: first.dataDir, databaseUrl: first.databaseUrl } });
    const client = new Client(second.url, { token: second.adminToken, tenant: p.tenant, project: p.project });
    const collapsed = await atLeast(() => decisionsOf(client, definitionId, 'misfireCollapsed'), 1);
    assert.equal(collapsed.length, 1);
    const caughtUpFor = ms(collapsed[0].scheduledFor);
    const runs = await runsOf(client, definitionId);
    const inDowntime = runs.filter((r) => ms(r.scheduledFor) > stoppedAt && ms(r.scheduledFor) <= caughtUpFor);
    assert.equal(inDowntime.length, 1, `runs for the missed fires: ${inDowntime.map((r) => r.scheduledFor).join(', ')}`);
    assert.ok(caughtUpFor - stoppedAt >= 2_000, 'the catch-up run is for the latest missed fire');
  });
});
