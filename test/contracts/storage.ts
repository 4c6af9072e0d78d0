import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  migratePlatform,
  PLATFORM_SCHEMA,
  quoteIdent,
  SQLSTATE,
  sqlstateOf,
  type DatabaseErrorLike,
  type SqlClient,
  type SqlExecutor,
  LATEST_PLATFORM_VERSION,
} from '../../storage/index.js';

/** A client on a fresh, empty database that the suite owns until dispose(). */
export interface StorageUnderTest {
  client: SqlClient;
  dispose(): Promise<void>;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves for everyone once `parties` callers have arrived. */
function barrier(parties: number): { arrive(): Promise<void> } {
  let arrived = 0;
  const all = deferred();
  return {
    arrive(): Promise<void> {
      arrived += 1;
      if (arrived === parties) all.resolve();
      return all.promise;
    },
  };
}

/** Asserts a database error with exactly this SQLSTATE and constraint name. */
async function rejectsWith(p: Promise<unknown>, code: string, constraint?: string): Promise<DatabaseErrorLike> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => {
    caught = err;
    return true;
  });
  assert.equal(sqlstateOf(caught), code, `expected SQLSTATE ${code}, got ${String((caught as Error).message)}`);
  const e = caught as DatabaseErrorLike;
  assert.equal(e.constraint, constraint);
  return e;
}

const count = async (db: SqlExecutor, table: string): Promise<number> =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

/**
 * The storage contract: everything the platform assumes of a SqlClient, run
 * unchanged on every backend (PGlite is PostgreSQL 18, the server may be 15).
 * `makeClient` must return a client on a fresh database; the suite shares it,
 * and each test works in its own uniquely named schema and drops it.
 * PostgreSQL clients need a pool of at least 2 connections.
 */
export function runStorageContract(name: string, makeClient: () => Promise<StorageUnderTest>): void {
  describe(`storage contract [${name}]`, () => {
    let sut: StorageUnderTest | undefined;
    const db = (): SqlClient => {
      if (sut === undefined) throw new Error('storage under test did not open');
      return sut.client;
    };
    const isPostgres = (): boolean => db().backend === 'postgres';

    /** Runs fn with a fresh schema (quoted name) and drops it afterwards. */
    async function inSchema<T>(fn: (s: string) => Promise<T>, prefix = 'contract_'): Promise<T> {
      const s = quoteIdent(`${prefix}${randomBytes(6).toString('hex')}`);
      await db().exec(`CREATE SCHEMA ${s}`);
      try {
        return await fn(s);
      } finally {
        await db().exec(`DROP SCHEMA ${s} CASCADE`);
      }
    }

    before(async () => {
      sut = await makeClient();
    });
    after(async () => {
      await sut?.dispose();
    });

    describe('query', () => {
      it('returns rows and rowCount for INSERT, UPDATE and DELETE … RETURNING', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, name text NOT NULL)`);
          const ins = await db().query(`INSERT INTO ${s}.t (id, name) VALUES ($1, $2), ($3, $4) RETURNING id, name`, [1, 'a', 2, 'b']);
          assert.deepEqual(ins, { rows: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }], rowCount: 2 });
          const upd = await db().query(`UPDATE ${s}.t SET name = $1 WHERE id = $2 RETURNING id, name`, ['x', 1]);
          assert.deepEqual(upd, { rows: [{ id: 1, name: 'x' }], rowCount: 1 });
          const none = await db().query(`UPDATE ${s}.t SET name = $1 WHERE id = $2 RETURNING id`, ['y', 99]);
          assert.deepEqual(none, { rows: [], rowCount: 0 });
          const del = await db().query(`DELETE FROM ${s}.t WHERE id = $1 RETURNING id`, [2]);
          assert.deepEqual(del, { rows: [{ id: 2 }], rowCount: 1 });
        }));

      it('returns no rows and the affected count for INSERT, UPDATE and DELETE without RETURNING', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, name text NOT NULL)`);
          assert.deepEqual(await db().query(`INSERT INTO ${s}.t VALUES ($1, 'a'), ($2, 'b'), ($3, 'c')`, [1, 2, 3]), { rows: [], rowCount: 3 });
          assert.deepEqual(await db().query(`UPDATE ${s}.t SET name = 'z' WHERE id > $1`, [1]), { rows: [], rowCount: 2 });
          assert.deepEqual(await db().query(`UPDATE ${s}.t SET name = 'z' WHERE id = $1`, [99]), { rows: [], rowCount: 0 });
          assert.deepEqual(await db().query(`DELETE FROM ${s}.t WHERE name = $1`, ['z']), { rows: [], rowCount: 2 });
        }));

      it('answers a prepared statement whose result column changed type since it was prepared (a changeType contract)', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, code text)`);
          await db().query(`INSERT INTO ${s}.t VALUES (1, '007')`);
          const name = `contract_read_${randomBytes(4).toString('hex')}`;
          const read = (): Promise<unknown> => db().query(`SELECT code FROM ${s}.t WHERE id = $1`, [1], name).then((r) => r.rows[0]);
          // Prepared on every pooled connection a sequential run touches.
          for (let i = 0; i < 6; i++) assert.deepEqual(await read(), { code: '007' });
          await db().exec(`ALTER TABLE ${s}.t ALTER COLUMN code TYPE int USING code::int`);
          for (let i = 0; i < 6; i++) assert.deepEqual(await read(), { code: 7 });
        }));

      it('returns rowCount equal to the rows a SELECT returns, and 0 for DDL', () =>
        inSchema(async (s) => {
          assert.deepEqual(await db().query(`CREATE TABLE ${s}.t (id int PRIMARY KEY)`), { rows: [], rowCount: 0 });
          await db().query(`INSERT INTO ${s}.t VALUES (1), (2), (3)`);
          assert.deepEqual(await db().query(`SELECT id FROM ${s}.t ORDER BY id`), { rows: [{ id: 1 }, { id: 2 }, { id: 3 }], rowCount: 3 });
          assert.deepEqual(await db().query(`SELECT id FROM ${s}.t WHERE id > $1`, [3]), { rows: [], rowCount: 0 });
        }));
    });

    describe('value conventions', () => {
      it('reads timestamptz as an ISO-8601 UTC string ending in Z with microseconds kept', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, at timestamptz, ats timestamptz[])`);
          await db().query(
            `INSERT INTO ${s}.t (id, at) VALUES (1, $1), (2, $2), (3, $3), (4, $4), (5, NULL)`,
            ['2026-01-02T03:04:05.123456Z', '2026-01-02T03:04:05Z', '2026-01-02T05:04:05.5+02:00', new Date('2026-01-02T03:04:05.123Z')],
          );
          const { rows } = await db().query<{ at: string | null }>(`SELECT at FROM ${s}.t ORDER BY id`);
          assert.deepEqual(rows.map((r) => r.at), [
            '2026-01-02T03:04:05.123456Z', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05.5Z', '2026-01-02T03:04:05.123Z', null,
          ]);
          const arr = await db().query(`SELECT ARRAY[$1::timestamptz, NULL] AS ats`, ['2026-01-02T03:04:05.000001Z']);
          assert.deepEqual(arr.rows, [{ ats: ['2026-01-02T03:04:05.000001Z', null] }]);
        }));

      it('reads numeric as an exact string', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, price numeric(10,2), big numeric)`);
          const big = '1234567890123456789012345678901234567890';
          await db().query(`INSERT INTO ${s}.t VALUES (1, $1, $2), (2, $3, $4), (3, NULL, NULL)`, ['12.50', big, 12.5, '0.1000000000000000000000000000001']);
          const { rows } = await db().query(`SELECT price, big FROM ${s}.t ORDER BY id`);
          assert.deepEqual(rows, [
            { price: '12.50', big },
            { price: '12.50', big: '0.1000000000000000000000000000001' },
            { price: null, big: null },
          ]);
          const arr = await db().query(`SELECT '{1.10,2,NULL}'::numeric[] AS a, sum(price) AS total FROM ${s}.t`);
          assert.deepEqual(arr.rows, [{ a: ['1.10', '2', null], total: '25.00' }]);
        }));

      it('reads int8, bigserial and count(*) as strings, int4 and int2 as numbers', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (seq bigserial PRIMARY KEY, big int8, i4 int4, i2 int2)`);
          const ins = await db().query(
            `INSERT INTO ${s}.t (big, i4, i2) VALUES ($1, $2, $3), ($4, $5, $6) RETURNING seq, big, i4, i2`,
            ['9007199254740993', 2147483647, 7, -1n, -2147483648, -7],
          );
          assert.deepEqual(ins.rows, [
            { seq: '1', big: '9007199254740993', i4: 2147483647, i2: 7 },
            { seq: '2', big: '-1', i4: -2147483648, i2: -7 },
          ]);
          const agg = await db().query(`SELECT count(*) AS n, count(*)::int AS m, ARRAY[1, 9007199254740993]::int8[] AS a FROM ${s}.t`);
          assert.deepEqual(agg.rows, [{ n: '2', m: 2, a: ['1', '9007199254740993'] }]);
        }));

      it('reads booleans, uuids and NULLs; gen_random_uuid() fills a default', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ok boolean, ref uuid, note text, n int4)`);
          const given = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11';
          await db().query(`INSERT INTO ${s}.t (ok, ref, note, n) VALUES ($1, $2, $3, $4), ($5, NULL, NULL, NULL)`, [true, given, 'x', 1, false]);
          const { rows } = await db().query<{ id: string; ok: boolean; ref: string | null; note: string | null; n: number | null }>(
            `SELECT id, ok, ref, note, n FROM ${s}.t ORDER BY ok DESC`,
          );
          assert.equal(rows.length, 2);
          assert.match(rows[0]!.id, UUID_V4);
          assert.match(rows[1]!.id, UUID_V4);
          assert.notEqual(rows[0]!.id, rows[1]!.id);
          assert.deepEqual(rows.map(({ id: _id, ...rest }) => rest), [
            { ok: true, ref: given.toLowerCase(), note: 'x', n: 1 },
            { ok: false, ref: null, note: null, n: null },
          ]);
        }));

      it('reads jsonb parsed: nested objects, arrays, scalars and unicode', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, doc jsonb)`);
          const docs: unknown[] = [
            { a: { b: [1, 'two', null, true, { c: 1.5 }] }, empty: {}, list: [] },
            [1, { x: 'ü' }, [[]]],
            { text: 'é☃😀 "quoted" \\ back\u2028line', zh: '中文' },
            'just a string',
            42,
            null,
          ];
          for (const [i, doc] of docs.entries()) await db().query(`INSERT INTO ${s}.t VALUES ($1, $2::jsonb)`, [i, JSON.stringify(doc)]);
          await db().query(`INSERT INTO ${s}.t VALUES ($1, NULL)`, [docs.length]);
          const { rows } = await db().query<{ doc: unknown }>(`SELECT doc FROM ${s}.t ORDER BY id`);
          assert.deepEqual(rows.map((r) => r.doc), [...docs, null]);
          const field = await db().query(`SELECT doc->>'text' AS t, doc->'a'->'b'->4 AS c FROM ${s}.t WHERE id = ANY($1::int[]) ORDER BY id`, [[0, 2]]);
          assert.deepEqual(field.rows, [{ t: null, c: { c: 1.5 } }, { t: 'é☃😀 "quoted" \\ back\u2028line', c: null }]);
        }));

      it('reads date, timestamp and interval as their PostgreSQL text, arrays too', async () => {
        const { rows } = await db().query(
          `SELECT '2026-01-02'::date AS d, '2026-01-02 03:04:05.5'::timestamp AS ts, '1 day 02:03:04'::interval AS iv,
                  ARRAY['2026-01-02'::date] AS ds, ARRAY['2026-01-02 03:04:05'::timestamp] AS tss, ARRAY['1 day'::interval, NULL] AS ivs`,
        );
        assert.deepEqual(rows, [{
          d: '2026-01-02', ts: '2026-01-02 03:04:05.5', iv: '1 day 02:03:04',
          ds: ['2026-01-02'], tss: ['2026-01-02 03:04:05'], ivs: ['1 day', null],
        }]);
      });
    });

    describe('exec', () => {
      it('runs a multi-statement script', () =>
        inSchema(async (s) => {
          await db().exec(`
            CREATE TABLE ${s}.a (id int PRIMARY KEY);
            CREATE TABLE ${s}.b (id int PRIMARY KEY REFERENCES ${s}.a(id));
            INSERT INTO ${s}.a VALUES (1), (2);
            INSERT INTO ${s}.b VALUES (2);
            UPDATE ${s}.a SET id = 3 WHERE id = 1;`);
          assert.deepEqual((await db().query(`SELECT id FROM ${s}.a ORDER BY id`)).rows, [{ id: 2 }, { id: 3 }]);
          assert.equal(await count(db(), `${s}.b`), 1);
        }));

      it('rolls back the whole script when one statement fails', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.a (id int PRIMARY KEY)`);
          await rejectsWith(db().exec(`INSERT INTO ${s}.a VALUES (1); INSERT INTO ${s}.a VALUES (1);`), SQLSTATE.UNIQUE_VIOLATION, 'a_pkey');
          assert.equal(await count(db(), `${s}.a`), 0);
        }));
    });

    describe('transaction', () => {
      it('commits every write and returns the function result', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, v text)`);
          const out = await db().transaction(async (tx) => {
            await tx.query(`INSERT INTO ${s}.t VALUES ($1, $2)`, [1, 'a']);
            await tx.query(`INSERT INTO ${s}.t VALUES ($1, $2)`, [2, 'b']);
            return 'done';
          });
          assert.equal(out, 'done');
          assert.deepEqual((await db().query(`SELECT id, v FROM ${s}.t ORDER BY id`)).rows, [{ id: 1, v: 'a' }, { id: 2, v: 'b' }]);
        }));

      it('rolls back everything and rethrows the same error when the function throws', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, v text); INSERT INTO ${s}.t VALUES (1, 'kept');`);
          const boom = new Error('boom');
          let caught: unknown;
          await db().transaction(async (tx) => {
            await tx.query(`INSERT INTO ${s}.t VALUES (2, 'new'), (3, 'new')`);
            await tx.query(`UPDATE ${s}.t SET v = 'changed' WHERE id = 1`);
            throw boom;
          }).catch((err: unknown) => {
            caught = err;
          });
          assert.equal(caught, boom);
          assert.deepEqual((await db().query(`SELECT id, v FROM ${s}.t ORDER BY id`)).rows, [{ id: 1, v: 'kept' }]);
        }));

      it('rolls back earlier writes when a later statement fails', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY)`);
          let raised: unknown;
          let caught: unknown;
          await db().transaction(async (tx) => {
            await tx.query(`INSERT INTO ${s}.t VALUES (1)`);
            try {
              await tx.query(`INSERT INTO ${s}.t VALUES (1)`);
            } catch (err) {
              raised = err;
              throw err;
            }
          }).catch((err: unknown) => {
            caught = err;
          });
          assert.equal(sqlstateOf(raised), SQLSTATE.UNIQUE_VIOLATION);
          assert.equal(caught, raised);
          assert.equal(await count(db(), `${s}.t`), 0);
        }));

      it('sees its own earlier writes inside the transaction', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, v int NOT NULL)`);
          const seen = await db().transaction(async (tx) => {
            await tx.query(`INSERT INTO ${s}.t VALUES (1, 10), (2, 20)`);
            await tx.query(`UPDATE ${s}.t SET v = v + 1 WHERE id = 1`);
            await tx.query(`DELETE FROM ${s}.t WHERE id = 2`);
            await tx.query(`INSERT INTO ${s}.t SELECT id + 10, v * 2 FROM ${s}.t`);
            return (await tx.query(`SELECT id, v FROM ${s}.t ORDER BY id`)).rows;
          });
          assert.deepEqual(seen, [{ id: 1, v: 11 }, { id: 11, v: 22 }]);
          assert.deepEqual((await db().query(`SELECT id, v FROM ${s}.t ORDER BY id`)).rows, seen);
        }));

      it('hides uncommitted writes from other connections', async (t) => {
        if (!isPostgres()) return void t.skip('PGlite has a single connection');
        await inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY)`);
          const outsideDuring = await db().transaction(async (tx) => {
            await tx.query(`INSERT INTO ${s}.t VALUES (1)`);
            assert.equal(await count(tx, `${s}.t`), 1);
            return count(db(), `${s}.t`); // another pooled connection
          });
          assert.equal(outsideDuring, 0);
          assert.equal(await count(db(), `${s}.t`), 1);
        });
      });
    });

    describe('serialization retry', () => {
      const raise40001 = `DO $$ BEGIN RAISE EXCEPTION 'simulated conflict' USING ERRCODE = 'serialization_failure'; END $$`;

      it('surfaces SQLSTATE 40001 raised by the database as a DatabaseError', async () => {
        await rejectsWith(db().query(raise40001), SQLSTATE.SERIALIZATION_FAILURE);
      });

      it('runs the function again on a database 40001 and commits only the final attempt', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (attempt int PRIMARY KEY)`);
          let attempts = 0;
          const out = await db().transaction(async (tx) => {
            attempts += 1;
            await tx.query(`INSERT INTO ${s}.t VALUES ($1)`, [attempts]);
            if (attempts < 3) await tx.query(raise40001);
            return attempts;
          });
          assert.equal(out, 3);
          assert.equal(attempts, 3);
          assert.deepEqual((await db().query(`SELECT attempt FROM ${s}.t`)).rows, [{ attempt: 3 }]);
        }));

      it('runs the function again when it throws a { code: "40001" } error', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (attempt int PRIMARY KEY)`);
          let attempts = 0;
          await db().transaction(async (tx) => {
            attempts += 1;
            await tx.query(`INSERT INTO ${s}.t VALUES ($1)`, [attempts]);
            if (attempts === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
          });
          assert.equal(attempts, 2);
          assert.deepEqual((await db().query(`SELECT attempt FROM ${s}.t`)).rows, [{ attempt: 2 }]);
        }));

      it('does not retry a non-retryable error', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY); INSERT INTO ${s}.t VALUES (1);`);
          let attempts = 0;
          let raised: unknown;
          let caught: unknown;
          await db().transaction(async (tx) => {
            attempts += 1;
            try {
              await tx.query(`INSERT INTO ${s}.t VALUES (1)`);
            } catch (err) {
              raised = err;
              throw err;
            }
          }).catch((err: unknown) => {
            caught = err;
          });
          assert.equal(attempts, 1);
          assert.equal(sqlstateOf(caught), SQLSTATE.UNIQUE_VIOLATION);
          assert.equal(caught, raised);

          attempts = 0;
          const plain = new Error('not a database error');
          await assert.rejects(db().transaction(async () => {
            attempts += 1;
            throw plain;
          }), (err: unknown) => err === plain);
          assert.equal(attempts, 1);
        }));

      it('gives up after five attempts and rethrows the serialization failure', async () => {
        let attempts = 0;
        const conflicts: unknown[] = [];
        await assert.rejects(db().transaction(async () => {
          attempts += 1;
          const err = Object.assign(new Error('could not serialize access'), { code: '40001' });
          conflicts.push(err);
          throw err;
        }), (err: unknown) => err === conflicts[conflicts.length - 1]);
        assert.equal(attempts, 5);
      });

      it('retries the loser of two conflicting SERIALIZABLE transactions until it commits', { timeout: 30_000 }, async (t) => {
        if (!isPostgres()) return void t.skip('PGlite runs one transaction at a time: no conflict to provoke');
        await inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (who text NOT NULL, seen int NOT NULL)`);
          const bothRead = barrier(2);
          const attempts = { a: 0, b: 0 };
          const run = (who: 'a' | 'b'): Promise<void> => db().transaction(async (tx) => {
            attempts[who] += 1;
            await tx.query('SET TRANSACTION ISOLATION LEVEL SERIALIZABLE');
            const seen = await count(tx, `${s}.t`);
            if (attempts[who] === 1) await bothRead.arrive(); // write skew: both read before either writes
            await tx.query(`INSERT INTO ${s}.t VALUES ($1, $2)`, [who, seen]);
          });
          await Promise.all([run('a'), run('b')]);
          // Serializable: the retried transaction saw the other's row; without the retry one would have failed with 40001.
          assert.deepEqual((await db().query<{ seen: number }>(`SELECT seen FROM ${s}.t ORDER BY seen`)).rows, [{ seen: 0 }, { seen: 1 }]);
          assert.ok(attempts.a + attempts.b >= 3, `expected a retry, attempts ${JSON.stringify(attempts)}`);
        });
      });
    });

    describe('constraint errors', () => {
      const parentChild = (s: string): string => `
        CREATE TABLE ${s}.parent (id int PRIMARY KEY);
        CREATE TABLE ${s}.child (
          id int PRIMARY KEY,
          parent_id int CONSTRAINT child_parent_fk REFERENCES ${s}.parent(id),
          keeper_id int CONSTRAINT child_keeper_fk REFERENCES ${s}.parent(id) ON DELETE RESTRICT,
          email text CONSTRAINT child_email_key UNIQUE,
          name text NOT NULL DEFAULT 'n',
          qty int CONSTRAINT child_qty_positive CHECK (qty > 0),
          ref uuid);
        INSERT INTO ${s}.parent VALUES (1), (2), (3);`;

      it('reports a unique violation as 23505 with the constraint name', () =>
        inSchema(async (s) => {
          await db().exec(parentChild(s));
          await db().query(`INSERT INTO ${s}.child (id, email) VALUES (1, $1)`, ['a@x']);
          const e = await rejectsWith(db().query(`INSERT INTO ${s}.child (id, email) VALUES (2, $1)`, ['a@x']), SQLSTATE.UNIQUE_VIOLATION, 'child_email_key');
          assert.equal(e.table, 'child');
          await rejectsWith(db().query(`INSERT INTO ${s}.child (id) VALUES (1)`), SQLSTATE.UNIQUE_VIOLATION, 'child_pkey');
        }));

      it('reports a missing or still-referenced parent (NO ACTION) as 23503 with the constraint name', () =>
        inSchema(async (s) => {
          await db().exec(parentChild(s));
          await rejectsWith(db().query(`INSERT INTO ${s}.child (id, parent_id) VALUES (1, $1)`, [99]), SQLSTATE.FOREIGN_KEY_VIOLATION, 'child_parent_fk');
          await db().query(`INSERT INTO ${s}.child (id, parent_id) VALUES (1, 1)`);
          await rejectsWith(db().query(`DELETE FROM ${s}.parent WHERE id = 1`), SQLSTATE.FOREIGN_KEY_VIOLATION, 'child_parent_fk');
          assert.equal(await count(db(), `${s}.parent`), 3);
        }));

      it('reports a delete blocked by ON DELETE RESTRICT with the constraint name (23001 from PostgreSQL 18, 23503 before)', () =>
        inSchema(async (s) => {
          await db().exec(parentChild(s));
          const version = (await db().query<{ v: number }>(`SELECT current_setting('server_version_num')::int AS v`)).rows[0]!.v;
          await db().query(`INSERT INTO ${s}.child (id, keeper_id) VALUES (1, 3)`);
          const code = version >= 180000 ? SQLSTATE.RESTRICT_VIOLATION : SQLSTATE.FOREIGN_KEY_VIOLATION;
          await rejectsWith(db().query(`DELETE FROM ${s}.parent WHERE id = $1`, [3]), code, 'child_keeper_fk');
          await rejectsWith(db().query(`INSERT INTO ${s}.child (id, keeper_id) VALUES (2, 42)`), SQLSTATE.FOREIGN_KEY_VIOLATION, 'child_keeper_fk');
        }));

      it('reports a NULL in a NOT NULL column as 23502 with table and column', () =>
        inSchema(async (s) => {
          await db().exec(parentChild(s));
          const e = await rejectsWith(db().query(`INSERT INTO ${s}.child (id, name) VALUES (1, $1)`, [null]), SQLSTATE.NOT_NULL_VIOLATION, undefined);
          assert.equal(e.table, 'child');
          assert.equal(e.column, 'name');
        }));

      it('reports a CHECK violation as 23514 with the constraint name', () =>
        inSchema(async (s) => {
          await db().exec(parentChild(s));
          await rejectsWith(db().query(`INSERT INTO ${s}.child (id, qty) VALUES (1, $1)`, [0]), SQLSTATE.CHECK_VIOLATION, 'child_qty_positive');
        }));

      it('reports invalid uuid text as 22P02', () =>
        inSchema(async (s) => {
          await db().exec(parentChild(s));
          await rejectsWith(db().query(`INSERT INTO ${s}.child (id, ref) VALUES (1, $1)`, ['not-a-uuid']), SQLSTATE.INVALID_TEXT_REPRESENTATION);
          await rejectsWith(db().query(`SELECT * FROM ${s}.child WHERE ref = $1`, ['123']), SQLSTATE.INVALID_TEXT_REPRESENTATION);
          assert.equal(await count(db(), `${s}.child`), 0);
        }));
    });

    describe('data-modifying CTE', () => {
      const tables = (s: string): string => `
        CREATE TABLE ${s}.entity (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), name text NOT NULL);
        CREATE TABLE ${s}.outbox (
          seq bigserial PRIMARY KEY,
          entity_id uuid NOT NULL,
          kind text NOT NULL CONSTRAINT outbox_kind_known CHECK (kind IN ('created', 'updated')));`;
      const write = (s: string): string => `
        WITH w AS (INSERT INTO ${s}.entity (name) VALUES ($1) RETURNING *),
             o AS (INSERT INTO ${s}.outbox (entity_id, kind) SELECT id, $2 FROM w)
        SELECT * FROM w`;

      it('writes the entity row and its outbox row in one statement', () =>
        inSchema(async (s) => {
          await db().exec(tables(s));
          const res = await db().query<{ id: string; name: string }>(write(s), ['first', 'created']);
          assert.equal(res.rowCount, 1);
          assert.equal(res.rows[0]!.name, 'first');
          assert.match(res.rows[0]!.id, UUID_V4);
          assert.deepEqual((await db().query(`SELECT seq, entity_id, kind FROM ${s}.outbox`)).rows, [{ seq: '1', entity_id: res.rows[0]!.id, kind: 'created' }]);
        }));

      it('writes neither row when the outbox insert fails', () =>
        inSchema(async (s) => {
          await db().exec(tables(s));
          await db().query(write(s), ['kept', 'created']);
          await rejectsWith(db().query(write(s), ['lost', 'deleted']), SQLSTATE.CHECK_VIOLATION, 'outbox_kind_known');
          assert.deepEqual((await db().query(`SELECT name FROM ${s}.entity`)).rows, [{ name: 'kept' }]);
          assert.equal(await count(db(), `${s}.outbox`), 1);
        }));
    });

    describe('row locks', () => {
      it('runs SELECT … FOR UPDATE SKIP LOCKED, alone and under DELETE … RETURNING', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.q (seq bigserial PRIMARY KEY, v text NOT NULL); INSERT INTO ${s}.q (v) VALUES ('a'), ('b'), ('c');`);
          const picked = await db().transaction(async (tx) =>
            (await tx.query(`SELECT seq, v FROM ${s}.q ORDER BY seq LIMIT 2 FOR UPDATE SKIP LOCKED`)).rows);
          assert.deepEqual(picked, [{ seq: '1', v: 'a' }, { seq: '2', v: 'b' }]);
          const moved = await db().query(
            `DELETE FROM ${s}.q WHERE seq IN (SELECT seq FROM ${s}.q ORDER BY seq LIMIT 2 FOR UPDATE SKIP LOCKED) RETURNING v`,
          );
          assert.deepEqual(moved, { rows: [{ v: 'a' }, { v: 'b' }], rowCount: 2 });
          assert.equal(await count(db(), `${s}.q`), 1);
        }));

      it('skips a row another transaction holds', { timeout: 30_000 }, async (t) => {
        if (!isPostgres()) return void t.skip('PGlite has a single connection: cross-transaction locking is untestable');
        await inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.q (id int PRIMARY KEY); INSERT INTO ${s}.q VALUES (1), (2), (3);`);
          const locked = deferred();
          const release = deferred();
          const first = db().transaction(async (tx) => {
            const rows = (await tx.query(`SELECT id FROM ${s}.q ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`)).rows;
            locked.resolve();
            await release.promise;
            return rows;
          });
          first.catch((err: unknown) => locked.reject(err));
          await locked.promise;
          let second: unknown[];
          try {
            second = await db().transaction(async (tx) => (await tx.query(`SELECT id FROM ${s}.q ORDER BY id FOR UPDATE SKIP LOCKED`)).rows);
          } finally {
            release.resolve();
          }
          assert.deepEqual(await first, [{ id: 1 }]);
          assert.deepEqual(second, [{ id: 2 }, { id: 3 }]);
        });
      });
    });

    describe('SQL the platform relies on', () => {
      it('matches = ANY($1::uuid[]) against a JS array parameter', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), n int NOT NULL); INSERT INTO ${s}.t (n) VALUES (1), (2), (3);`);
          const ids = (await db().query<{ id: string }>(`SELECT id FROM ${s}.t ORDER BY n`)).rows.map((r) => r.id);
          const hit = await db().query(`SELECT n FROM ${s}.t WHERE id = ANY($1::uuid[]) ORDER BY n`, [[ids[0], ids[2], '00000000-0000-4000-8000-000000000000']]);
          assert.deepEqual(hit.rows, [{ n: 1 }, { n: 3 }]);
          assert.deepEqual((await db().query(`SELECT n FROM ${s}.t WHERE id = ANY($1::uuid[])`, [[]])).rows, []);
        }));

      it('takes characters, not bytes, with left(text, n)', async () => {
        const { rows } = await db().query(`SELECT left($1::text, 2) AS a, left($2::text, -1) AS b, left($3::text, 10) AS c`, ['é☃xyz', 'abc', 'ab']);
        assert.deepEqual(rows, [{ a: 'é☃', b: 'ab', c: 'ab' }]);
      });

      it('walks a parent chain with WITH RECURSIVE', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.node (id int PRIMARY KEY, parent int REFERENCES ${s}.node(id));
            INSERT INTO ${s}.node VALUES (1, NULL), (2, 1), (3, 2), (4, 1);`);
          const { rows } = await db().query(
            `WITH RECURSIVE up AS (
               SELECT id, parent, 0 AS depth FROM ${s}.node WHERE id = $1
               UNION ALL
               SELECT n.id, n.parent, up.depth + 1 FROM ${s}.node n JOIN up ON n.id = up.parent)
             SELECT id, depth FROM up ORDER BY depth`,
            [3],
          );
          assert.deepEqual(rows, [{ id: 3, depth: 0 }, { id: 2, depth: 1 }, { id: 1, depth: 2 }]);
        }));

      it('returns only inserted rows from ON CONFLICT DO NOTHING RETURNING', () =>
        inSchema(async (s) => {
          await db().exec(`CREATE TABLE ${s}.t (id int PRIMARY KEY, v text); INSERT INTO ${s}.t VALUES (1, 'a'), (2, 'b');`);
          const res = await db().query(`INSERT INTO ${s}.t VALUES (2, 'x'), (3, 'c') ON CONFLICT DO NOTHING RETURNING id, v`);
          assert.deepEqual(res, { rows: [{ id: 3, v: 'c' }], rowCount: 1 });
          const none = await db().query(`INSERT INTO ${s}.t VALUES (1, 'x') ON CONFLICT (id) DO NOTHING RETURNING id`);
          assert.deepEqual(none, { rows: [], rowCount: 0 });
          assert.deepEqual((await db().query(`SELECT v FROM ${s}.t ORDER BY id`)).rows, [{ v: 'a' }, { v: 'b' }, { v: 'c' }]);
        }));

      it('drops a schema with its tables, indexes and keys with DROP SCHEMA … CASCADE', async () => {
        const name = `contract_drop_${randomBytes(6).toString('hex')}`;
        const s = quoteIdent(name);
        await db().exec(`CREATE SCHEMA ${s};
          CREATE TABLE ${s}.a (id uuid PRIMARY KEY DEFAULT gen_random_uuid());
          CREATE TABLE ${s}.b (id bigserial PRIMARY KEY, a_id uuid NOT NULL REFERENCES ${s}.a(id), v jsonb);
          CREATE INDEX b_a_idx ON ${s}.b (a_id);
          INSERT INTO ${s}.a DEFAULT VALUES;`);
        await db().exec(`DROP SCHEMA ${s} CASCADE`);
        const left = await db().query(
          `SELECT (SELECT count(*)::int FROM pg_namespace WHERE nspname = $1) AS schemas,
                  (SELECT count(*)::int FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1) AS relations`,
          [name],
        );
        assert.deepEqual(left.rows, [{ schemas: 0, relations: 0 }]);
      });

      it('round-trips mixed-case and quote-bearing identifiers through quoteIdent', () =>
        inSchema(async (s) => {
          const order = quoteIdent('Order');
          const createdAt = quoteIdent('createdAt');
          const odd = quoteIdent('say "hi"');
          await db().exec(`CREATE TABLE ${s}.${order} (id int PRIMARY KEY, ${createdAt} timestamptz NOT NULL, ${odd} text)`);
          await db().query(`INSERT INTO ${s}.${order} (id, ${createdAt}, ${odd}) VALUES (1, $1, $2)`, ['2026-01-02T03:04:05.123456Z', 'hello']);
          const { rows } = await db().query(`SELECT ${order}.${createdAt}, ${order}.${odd} FROM ${s}.${order} WHERE ${order}.id = 1`);
          assert.deepEqual(rows, [{ createdAt: '2026-01-02T03:04:05.123456Z', 'say "hi"': 'hello' }]);
          await rejectsWith(db().query(`SELECT createdAt FROM ${s}.${order}`), '42703'); // unquoted folds to lower case
        }, 'Contract_'));
    });

    describe('platform migrations', () => {
      const P = quoteIdent(PLATFORM_SCHEMA);
      const versions = async (): Promise<number[]> =>
        (await db().query<{ version: number }>(`SELECT version FROM ${P}.schema_migrations ORDER BY version`)).rows.map((r) => r.version);

      after(async () => {
        await db().exec(`DROP SCHEMA IF EXISTS ${P} CASCADE`);
      });

      it('applies every migration once and nothing on a second run', async () => {
        await db().exec(`DROP SCHEMA IF EXISTS ${P} CASCADE`);
        const first = await migratePlatform(db());
        assert.ok(first.length > 0);
        // Versions are assigned to parallel work ahead of time, so a branch may skip some: in order, each once, up to the latest.
        assert.ok(first.every((v, i) => i === 0 ? v === 1 : v > first[i - 1]!), `ascending from 1: ${first.join(',')}`);
        assert.equal(first[first.length - 1], LATEST_PLATFORM_VERSION);
        assert.deepEqual(await versions(), first);
        assert.deepEqual(await migratePlatform(db()), []);
        assert.deepEqual(await versions(), first);
        const tables = await db().query(`SELECT to_regclass('${PLATFORM_SCHEMA}.outbox')::text AS outbox, to_regclass('${PLATFORM_SCHEMA}.tenants')::text AS tenants`);
        assert.deepEqual(tables.rows, [{ outbox: `${PLATFORM_SCHEMA}.outbox`, tenants: `${PLATFORM_SCHEMA}.tenants` }]);
      });

      it('lets two concurrent runs on a fresh database both succeed, applying each migration once', async () => {
        await db().exec(`DROP SCHEMA IF EXISTS ${P} CASCADE`);
        const all = await migratePlatform(db());
        // Catalog races in CREATE … IF NOT EXISTS show up only sometimes: race several fresh starts.
        for (let round = 0; round < 5; round++) {
          await db().exec(`DROP SCHEMA ${P} CASCADE`);
          const [a, b] = await Promise.all([migratePlatform(db()), migratePlatform(db())]);
          assert.deepEqual([...a, ...b].sort((x, y) => x - y), all, `round ${round}: a=${JSON.stringify(a)} b=${JSON.stringify(b)}`);
          assert.deepEqual(await versions(), all);
        }
      });
    });
  });
}
