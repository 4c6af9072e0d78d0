/**
 * A statement given an AbortSignal (a GraphQL request's): not started once
 * the signal aborted (both backends); on PostgreSQL, cancelled while it runs,
 * rejected with the signal's reason, its connection not handed to the next
 * caller (a late cancel request must not hit another statement).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgClient, PgliteClient, type SqlClient } from '../../storage/index.js';
import { createTestDatabase } from '../support/server.js';
import { withServices } from '../support/services.js';

describe('statement abort [pglite]', () => {
  let db: PgliteClient;
  before(async () => { db = await PgliteClient.open(undefined); });
  after(async () => { await db.close(); });

  it('an aborted signal refuses the statement with its reason; without one the statement runs', async () => {
    const ac = new AbortController();
    const reason = new Error('request over');
    ac.abort(reason);
    await assert.rejects(db.query('SELECT 1 AS x', [], undefined, ac.signal), (err) => err === reason);
    assert.deepEqual((await db.query('SELECT 1 AS x', [], undefined, new AbortController().signal)).rows, [{ x: 1 }]);
  });
});

withServices('statement abort [postgres]', ['postgres'], () => {
  describe('statement abort [postgres]', () => {
    let db: SqlClient;
    let drop: () => Promise<void>;
    before(async () => {
      const made = await createTestDatabase();
      drop = made.drop;
      db = new PgClient({ connectionString: made.url, max: 1 });
    });
    after(async () => {
      await db.close();
      await drop();
    });

    it('a running statement is cancelled on abort, rejected with the reason, and the next statement runs on a fresh connection', async () => {
      const first = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const ac = new AbortController();
      const reason = new Error('client gone');
      setTimeout(() => ac.abort(reason), 200);
      const t = Date.now();
      await assert.rejects(db.query('SELECT pg_sleep(10)', [], undefined, ac.signal), (err) => err === reason);
      assert.ok(Date.now() - t < 5_000, `cancelled after ${Date.now() - t} ms`);
      // One connection in the pool: the next statement runs at once, on another backend.
      const next = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      assert.notEqual(next.rows[0]!.pid, first, 'the aborted statement\'s connection was discarded');
      const running = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(10)%' AND state = 'active'");
      assert.equal(running.rows[0]!.n, 0);
    });
  });
});
