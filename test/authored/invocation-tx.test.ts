/**
 * InvocationTx (runtime/authored/invocation-tx.ts) on a real PGlite: reads go
 * to the pool until the first write opens the transaction; a failed step rolls
 * back to its savepoint and leaves the transaction usable; commit keeps every
 * write, rollback none; a transaction the client would retry answers 409
 * instead of running the handler's writes again.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgliteClient, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { InvocationTx } from '../../runtime/authored/invocation-tx.js';
import { ServiceError } from '../../runtime/errors/service-error.js';

let db: PgliteClient;
const rows = async (): Promise<number[]> => (await db.query<{ v: number }>('SELECT v FROM itx ORDER BY v')).rows.map((r) => r.v);

before(async () => {
  db = await PgliteClient.open(undefined);
  await db.exec('CREATE TABLE itx (v int PRIMARY KEY)');
});
after(async () => {
  await db.close();
});

it('commits every write of the invocation together, after a refused one was rolled back to its savepoint', async () => {
  await db.query('DELETE FROM itx');
  const tx = new InvocationTx(db);
  assert.equal(tx.open, false);
  assert.deepEqual((await tx.step(() => tx.query('SELECT count(*)::int AS n FROM itx'), () => false, false)).rows, [{ n: 0 }]);
  assert.equal(tx.open, false, 'a read opens nothing');
  await tx.step(() => tx.query('INSERT INTO itx VALUES (1)'), () => false, true);
  await assert.rejects(tx.step(() => tx.query('INSERT INTO itx VALUES (1)'), () => false, true), /duplicate key/);
  // An executor's own transaction is a savepoint of the invocation's; a failed answer (not a throw) rolls its step back too.
  await tx.step(() => tx.transaction((t) => t.query('INSERT INTO itx VALUES (2)')), () => false, true);
  await tx.step(() => tx.query('INSERT INTO itx VALUES (3)'), () => true, true);
  assert.deepEqual((await tx.query<{ v: number }>('SELECT v FROM itx ORDER BY v')).rows.map((r) => r.v), [1, 2], 'it reads its own writes');
  await tx.commit();
  assert.deepEqual(await rows(), [1, 2]);
});

it('rolls back every write when the invocation fails', async () => {
  await db.query('DELETE FROM itx');
  const tx = new InvocationTx(db);
  await tx.step(() => tx.query('INSERT INTO itx VALUES (7)'), () => false, true);
  await tx.step(() => tx.query('INSERT INTO itx VALUES (8)'), () => false, true);
  await tx.rollback();
  assert.deepEqual(await rows(), []);
});

it('never runs the transaction again: a retry the client would make answers 409 Handler.TransactionConflict', async () => {
  const tx0: SqlExecutor = { query: async () => ({ rows: [], rowCount: 0 }) };
  // As SqlClient.transaction does after a serialization failure at COMMIT: the function runs a second time.
  const retrying = {
    backend: 'postgres', connections: 1, query: tx0.query, exec: async () => {}, close: async () => {},
    transaction: async <T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> => {
      await fn(tx0);
      return fn(tx0);
    },
  } as SqlClient;
  const tx = new InvocationTx(retrying);
  await tx.begin();
  const err = await tx.commit().then(() => null, (e: unknown) => e);
  assert.ok(ServiceError.is(err), String(err));
  assert.equal(err.code, 'CONFLICT');
  assert.equal(err.reasonCode, 'Handler.TransactionConflict');
});
