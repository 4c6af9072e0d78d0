/**
 * Usage and quotas of task runs (CONTRACT "Usage and quotas": task runs meter `task.runs`, quota
 * kind `task.runs.monthly`; docs/usage.md): a manual run counts on its route's audit row and a hard
 * quota refuses the run past it with 429 before anything is queued; a fire of a time trigger counts
 * as its own usage event once committed.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { newSlug } from '../control/support.js';
import { addTrigger, createDefinition, publishJob } from './support.js';

forEachBackend('task run usage and quotas', (backend: Backend) => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  async function project(): Promise<{ c: Client; projectId: string }> {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    await publishJob(p.client, 'noop', 'export default async function () { return 1; }\n');
    return { c: p.client, projectId: p.projectId };
  }

  const usageEvents = async (c: Client): Promise<any[]> => {
    await server.node.services.audit.flush();
    await server.node.services.usage!.flush();
    const r = await c.get('/api/usage/events?kind=task.runs');
    expectStatus(r, 200);
    return r.body.data;
  };

  it('a hard task.runs.monthly quota of 2: two manual runs are queued, the third → 429 and is not queued; usage counts 2 task.runs', async () => {
    const { c, projectId } = await project();
    const def = await createDefinition(c, { name: 'limited', handler: 'noop', overlap: 'allow' });
    expectStatus(await c.post(`/api/Usage/${projectId}/quotas`, { kind: 'task.runs.monthly', limit: 2, mode: 'hard' }), 201);
    for (let i = 0; i < 2; i++) expectStatus(await c.post(`/api/scheduling/taskrun/${def.id}/trigger`, {}), 202);
    const refused = await c.post(`/api/scheduling/taskrun/${def.id}/trigger`, {});
    expectError(refused, 429, 'QUOTA_EXCEEDED', 'Quota.TaskRunsMonthly.Exhausted');
    assert.equal(refused.headers.get('x-service-quota-kind'), 'task.runs.monthly');
    const runs = await c.get(`/api/scheduling/taskrun?definitionId=${def.id}`);
    expectStatus(runs, 200);
    assert.equal(runs.body.data.length, 2, 'the refused run was never queued');
    const events = await usageEvents(c);
    assert.deepEqual(events.map((e) => [e.kind, e.quantity, e.operationId]), [['task.runs', 1, 'ControlPlane.TaskRun.Trigger'], ['task.runs', 1, 'ControlPlane.TaskRun.Trigger']]);
    const summary = await c.get(`/api/Usage/${projectId}/summary`);
    expectStatus(summary, 200);
    assert.equal(summary.body.data.find((q: any) => q.kind === 'task.runs.monthly')?.used, 2);
  });

  it('each fire of a 1 s interval trigger is one task.runs usage event with cause schedule', async () => {
    const { c } = await project();
    const def = await createDefinition(c, { name: 'ticking', handler: 'noop', overlap: 'allow' });
    await addTrigger(c, def.id, { kind: 'interval', intervalSeconds: 1 });
    const deadline = Date.now() + 8_000;
    let fires: any[] = [];
    while (Date.now() < deadline) {
      fires = (await usageEvents(c)).filter((e) => e.dimensions?.cause === 'schedule');
      if (fires.length >= 2) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expectStatus(await c.post(`/api/scheduling/taskdefinition/${def.id}/pause`, {}), 200);
    assert.ok(fires.length >= 2, `${fires.length} fire usage events in 8 s`);
    assert.ok(fires.every((e) => e.kind === 'task.runs' && e.quantity === 1 && e.operationId === 'ControlPlane.TaskRun.Fire'));
    const runs = await c.get(`/api/scheduling/taskrun?definitionId=${def.id}&pageSize=200`);
    expectStatus(runs, 200);
    const runCorrelations = new Set<string>();
    assert.ok(runs.body.data.length >= fires.length, 'no fire is metered without its run');
    for (const e of fires) runCorrelations.add(e.correlationId);
    assert.equal(runCorrelations.size, fires.length, 'one event per fire');
  });
});
