/**
 * A node killed in the middle of a schema change (CONTRACT: Control plane, "Schema journal
 * and migrations"; spec: the SchemaTransitionRecoverer operator). Real child processes on
 * the same data: the test-only hook PLINTH_TEST_SCHEMA_CRASH=after-pending makes a node
 * SIGKILL itself after the journal entry is written `pending` and before its DDL
 * transaction; PLINTH_TEST_SKIP_SCHEMA_RECOVERY=1 keeps the recoverer from running at start
 * so the entry can be watched and recovered through the route. A node killed mid-backfill of a
 * schema transition has it resumed at the next start. Nothing half-applied, ever.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { createTestDatabase, forEachBackend, type Backend } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { controlData } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }] };

forEachBackend('schema change interrupted by a crash', (backend: Backend) => {
  after(async () => { await reapPlinthProcesses(); });

  it('the entry stays pending; the recover route or the recoverer at start finishes it, or undoes it when it no longer applies', async () => {
    const adminToken = `adm-${randomUUID()}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-schema-crash-'));
    const db = backend === 'postgres' ? await createTestDatabase() : null;
    const start = (env: Record<string, string> = {}): Promise<PlinthProcess> => startPlinthProcess({
      adminToken, nodeId: `schema-crash-${backend}`, databaseUrl: db?.url ?? null, env: { ...(db === null ? { DATA_DIR: dataDir } : {}), ...env },
    });
    const CRASH = { PLINTH_TEST_SCHEMA_CRASH: 'after-pending' };
    const SKIP = { PLINTH_TEST_SKIP_SCHEMA_RECOVERY: '1' };
    /** Sends a schema change to a node that dies on it; the request gets no answer. */
    const crashOn = async (path: string, body: unknown): Promise<void> => {
      const node = await start(CRASH);
      const c = new Client(node.url, { token: adminToken, ...scope });
      await assert.rejects(c.post(path, body));
      assert.equal(await node.exited, null);
    };
    let scope: { tenant: string; project: string } = { tenant: '', project: '' };
    const journal = async (c: Client): Promise<any[]> => controlData(await c.get('/api/Schema/journal'), 200);
    const meta = async (c: Client): Promise<{ version: number; names: string[] }> => {
      const m = controlData(await c.get('/api/Schema/entities/metadata'), 200);
      return { version: m.publicationVersion, names: m.entities.map((e: any) => e.entityName) };
    };
    try {
      const first = await start();
      const p = await bootstrapProject(first.url, adminToken);
      scope = { tenant: p.tenant, project: p.project };
      await defineEntity(p.client, CUSTOMER);
      expectStatus(await p.client.post('/api/customers', { email: 'kept@example.com' }), 201);
      assert.equal(await first.terminate(), 0);

      // 1. Killed mid-migration; restarted without the recoverer: the journal says the entry is pending, nothing of it applied.
      await crashOn('/api/Schema/migrate/apply', { changes: [
        { action: 'create', definition: { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }] } },
        { action: 'alter', definition: { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] } },
      ] });
      let node = await start(SKIP);
      let c = new Client(node.url, { token: adminToken, ...scope });
      const [pending] = await journal(c);
      assert.equal(pending.state, 'pending');
      assert.equal(pending.change.action, 'migrate');
      assert.equal(pending.publicationVersion, 2);
      assert.deepEqual(await meta(c), { version: 1, names: ['Customer'] });
      expectError(await c.get('/api/tags'), 404, 'NOT_FOUND', 'Route.Unknown');
      expectError(await c.post('/api/customers', { email: 'x@example.com', phone: '1' }), 422, 'VALIDATION_FAILED', 'CustomerValidation.UnknownField', 'phone');
      // The recover route finishes it: the same changes on the same head, one publication.
      const recovered = controlData(await c.post(`/api/Schema/journal/${pending.id}/recover`), 200, 'SchemaJournal', 'recovered');
      assert.equal(recovered.state, 'applied');
      assert.equal(recovered.publicationVersion, 2);
      assert.deepEqual(await meta(c), { version: 2, names: ['Customer', 'Tag'] });
      expectStatus(await c.post('/api/tags', { label: 'a' }), 201);
      const rows = await c.get('/api/customers');
      assert.deepEqual(rows.body.data.map((r: any) => r.email), ['kept@example.com']);
      assert.equal(await node.terminate(), 0);

      // 2. Killed mid-change; the SchemaTransitionRecoverer finishes it before the next node starts serving.
      await crashOn('/api/Schema/entities', { entityName: 'Label', fields: [{ name: 'text', type: 'String', nullable: true }] });
      node = await start();
      c = new Client(node.url, { token: adminToken, ...scope });
      const [finished] = await journal(c);
      assert.deepEqual([finished.change.action, finished.change.entityName, finished.state, finished.publicationVersion], ['create', 'Label', 'applied', 3]);
      assert.deepEqual(await meta(c), { version: 3, names: ['Customer', 'Label', 'Tag'] });
      expectStatus(await c.post('/api/labels', { text: 'ok' }), 201);
      assert.equal(await node.terminate(), 0);

      // 3. Killed mid-change, and the head moved on before recovery: it is undone (failed), nothing of it applied.
      await crashOn('/api/Schema/entities', { entityName: 'Note', fields: [{ name: 'body', type: 'String', nullable: true }] });
      node = await start(SKIP);
      c = new Client(node.url, { token: adminToken, ...scope });
      const notePending = (await journal(c)).find((e) => e.change.entityName === 'Note');
      assert.equal(notePending.state, 'pending');
      await defineEntity(c, { entityName: 'Memo', fields: [{ name: 'body', type: 'String', nullable: true }] });
      const undone = controlData(await c.post(`/api/Schema/journal/${notePending.id}/recover`), 200);
      assert.equal(undone.state, 'failed');
      assert.deepEqual(await meta(c), { version: 4, names: ['Customer', 'Label', 'Memo', 'Tag'] });
      expectError(await c.get('/api/notes'), 404, 'NOT_FOUND', 'Route.Unknown');
      // Recovering again changes nothing.
      assert.equal(controlData(await c.post(`/api/Schema/journal/${notePending.id}/recover`), 200).state, 'failed');
      const states = (await journal(c)).map((e) => [e.change.entityName ?? e.change.action, e.state]);
      assert.deepEqual(states.filter(([, s]) => s !== 'applied'), [['Note', 'failed']]);

      // 4. A node killed mid-backfill of a schema transition: the next start resumes the backfill and contracts.
      for (let i = 0; i < 12; i++) expectStatus(await c.post('/api/memos', { body: `memo ${i}` }), 201);
      const t = controlData(await c.post('/api/SchemaTransition', { entityName: 'Memo', kind: 'renameField', field: 'body', newName: 'text', batchRows: 1, pauseMs: 300 }), 201);
      expectStatus(await c.post(`/api/SchemaTransition/${t.id}/execute`), 202);
      await node.kill9();
      node = await start();
      c = new Client(node.url, { token: adminToken, ...scope });
      const deadline = Date.now() + 30_000;
      let state = '';
      while (state !== 'completed' && Date.now() < deadline) {
        // Reads keep being served while the resumed transition runs.
        expectStatus(await c.get('/api/memos'), 200);
        state = controlData(await c.get(`/api/SchemaTransition/${t.id}`), 200).state;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(state, 'completed');
      const memos = (await c.get('/api/memos?pageSize=100')).body.data;
      assert.deepEqual(memos.map((m: any) => m.text).sort(), Array.from({ length: 12 }, (_, i) => `memo ${i}`).sort());
      assert.ok(memos.every((m: any) => m.body === undefined));
      assert.equal(await node.terminate(), 0);
    } finally {
      await reapPlinthProcesses();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
