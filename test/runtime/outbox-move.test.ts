/**
 * The embedded outbox move (runtime/events/outbox-processor.ts, docs/performance.md W3):
 * one statement without an explicit row lock or ON CONFLICT. A row is still moved
 * exactly once when two movers run at once (PostgreSQL: two processes on one
 * database), a clash with an id already in the log does not stall the outbox,
 * and the outbox takes rows without a unique index on event_id (migration 14).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { OutboxProcessor } from '../../runtime/events/outbox-processor.js';
import { createLogger } from '../../runtime/log.js';
import { PgClient, type SqlClient } from '../../storage/index.js';

const P = 'plinth';

/** Outbox rows with the given event ids, tagged by correlation id; returns their event ids. */
async function outboxRows(db: SqlClient, ids: string[], tag: string): Promise<string[]> {
  const project = randomUUID();
  await db.query(
    `INSERT INTO ${P}.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
     SELECT id, 'test.happened', $2::uuid, $2::uuid, 'main', NULL, NULL, '[]'::jsonb, $3, 1 FROM unnest($1::uuid[]) AS id`,
    [ids, project, tag],
  );
  return ids;
}

async function count(db: SqlClient, table: string, where: string, params: unknown[]): Promise<number> {
  return Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${P}.${table} WHERE ${where}`, params)).rows[0]!.n);
}

const log = createLogger('error');

forEachBackend('outbox move', (backend: Backend) => {
  let s: TestServer;
  let db: SqlClient;
  before(async () => {
    s = await startServer({ backend });
    db = s.node.services.db;
  });
  after(async () => s.close());

  it('moves a batch whose event id is already in the log: the log keeps its row, the rest is moved, the outbox empties', async () => {
    const tag = `clash-${randomUUID()}`;
    const clash = randomUUID();
    await db.query(
      `INSERT INTO ${P}.events (id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
       VALUES ($1, 'test.original', $1, $1, NULL, $2, 1, now(), '{}'::jsonb)`, [clash, tag],
    );
    const fresh = [randomUUID(), randomUUID()];
    await outboxRows(db, [fresh[0]!, clash, fresh[1]!], tag);
    const mover = new OutboxProcessor(db, log);
    await mover.drain();
    assert.equal(await count(db, 'outbox', 'correlation_id = $1', [tag]), 0, 'the outbox emptied');
    assert.equal(mover.stats.failures, 0);
    const rows = (await db.query<{ id: string; type: string }>(`SELECT id::text, type FROM ${P}.events WHERE correlation_id = $1 ORDER BY seq`, [tag])).rows;
    assert.deepEqual(rows, [{ id: clash, type: 'test.original' }, { id: fresh[0], type: 'test.happened' }, { id: fresh[1], type: 'test.happened' }]);
  });

  it('keeps outbox rows that share an event id (no unique index there any more); the log keeps one', async () => {
    const tag = `dup-${randomUUID()}`;
    const id = randomUUID();
    await outboxRows(db, [id, id], tag);
    await new OutboxProcessor(db, log).drain();
    assert.equal(await count(db, 'outbox', 'correlation_id = $1', [tag]), 0);
    assert.equal(await count(db, 'events', 'correlation_id = $1', [tag]), 1);
  });

  it('moves every row exactly once, in outbox order, when two movers drain at once', { skip: backend !== 'postgres' && 'PGlite has one connection' }, async () => {
    const tag = `race-${randomUUID()}`;
    const ids = await outboxRows(db, Array.from({ length: 1200 }, () => randomUUID()), tag);
    const a = new PgClient({ connectionString: s.databaseUrl!, max: 2 });
    const b = new PgClient({ connectionString: s.databaseUrl!, max: 2 });
    try {
      const movers = [new OutboxProcessor(a, log, { batchSize: 50 }), new OutboxProcessor(b, log, { batchSize: 50 })];
      await Promise.all(movers.map((m) => m.drain()));
      await Promise.all(movers.map((m) => m.drain()));
      assert.equal(movers[0]!.stats.failures + movers[1]!.stats.failures, 0);
    } finally {
      await a.close();
      await b.close();
    }
    assert.equal(await count(db, 'outbox', 'correlation_id = $1', [tag]), 0);
    const moved = (await db.query<{ id: string }>(`SELECT id::text FROM ${P}.events WHERE correlation_id = $1 ORDER BY seq`, [tag])).rows.map((r) => r.id);
    assert.equal(moved.length, ids.length, 'each row once');
    assert.deepEqual(moved, ids, 'in outbox order');
  });
});
