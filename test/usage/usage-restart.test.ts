/**
 * Usage across a restart: a graceful stop flushes the buffered events, the
 * next node on the same data serves them, and BillingDrainRollup continues
 * from its high-water mark (nothing counted twice, nothing skipped).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';

const totals = (rows: Json[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const r of rows) out[r.kind as string] = (out[r.kind as string] ?? 0) + (r.quantity as number);
  return out;
};

forEachBackend('usage across a restart', (backend: Backend) => {
  it('keeps the events a stop flushed and rolls up from the mark', async () => {
    const first = await startServer({ backend, persistent: true, env: { USAGE_ROLLUP_INTERVAL_MS: '3600000' } });
    let second: TestServer | undefined;
    try {
      const p = await bootstrapProject(first.url, first.adminToken, `s${randomUUID().slice(0, 8)}`);
      await defineEntity(p.client, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
      expectStatus(await p.client.post('/api/docs/batch', { items: [{ title: 'a' }, { title: 'b' }] }), 201);
      expectStatus(await p.client.get('/api/docs'), 200);
      await first.node.services.audit.flush();
      await first.node.services.usage!.flush();
      assert.equal((await first.node.usageRollup.rollUpNow()).rolled, 2);
      expectStatus(await p.client.post('/api/docs', { title: 'c' }), 201);
      expectStatus(await p.client.get('/api/docs/count'), 200);
      // No explicit flush: the writer's 50 ms timer or the graceful stop writes what is still buffered.
      await first.stop();

      second = await startServer({ backend, reuse: { dataDir: first.dataDir, databaseUrl: first.databaseUrl }, env: { USAGE_ROLLUP_INTERVAL_MS: '3600000' } });
      const admin = new Client(second.url, { token: second.adminToken });
      const events = await admin.get(`/api/Usage/${p.projectId}/events`);
      expectStatus(events, 200);
      assert.deepEqual(totals(events.body.data as Json[]), { 'write.monthly': 3, 'read.monthly': 2 });
      assert.equal((events.body.data as Json[]).length, 4);
      // The mark survived: only the two events after it are added now, and the totals still equal the events.
      assert.equal((await second.node.usageRollup.rollUpNow()).rolled, 2);
      assert.equal((await second.node.usageRollup.rollUpNow()).rolled, 0);
      const rollups = await admin.get(`/api/Usage/${p.projectId}/rollups?window=day`);
      expectStatus(rollups, 200);
      assert.deepEqual(totals(rollups.body.data as Json[]), { 'write.monthly': 3, 'read.monthly': 2 });
    } finally {
      await second?.close();
      await first.close();
    }
  });
});
