/**
 * The batched filter check (runtime/realtime/filter-batch.ts) against a real
 * in-memory PGlite: every distinct filter is one boolean column of one query
 * per chunk; chunks respect the column and parameter bounds; a filter that
 * no longer compiles matches nothing without failing the others.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PgliteClient } from '../../storage/index.js';
import { SqlParams } from '../../runtime/filter/to-sql.js';
import { batchQuery, chunkChecks, evaluateChecks, type RowCheck } from '../../runtime/realtime/filter-batch.js';

/** A check `t.<column> = <value>` (or any SQL text with one parameter). */
const check = (sql: (p: string) => string, value: unknown, key = `${sql('$')}=${String(value)}`): RowCheck => ({
  key, table: 'orders', live: ' AND t.deleted IS NOT TRUE', paramCount: 1,
  predicate: (params: SqlParams) => sql(params.add(value)),
});

describe('realtime filter batch', () => {
  let db: PgliteClient;
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  before(async () => {
    db = await PgliteClient.open(undefined);
    await db.query('CREATE TABLE orders (id uuid PRIMARY KEY, status text, n integer, deleted boolean)');
    await db.query('INSERT INTO orders VALUES ($1, $2, 1, false), ($3, $4, 2, false), ($5, $6, 3, true)', [ids[0], 'paid', ids[1], 'open', ids[2], 'paid']);
  });
  after(async () => {
    await db?.close();
  });

  it('one query evaluates every filter over every row; hidden, missing and NULL rows match nothing', async () => {
    const checks = [check((p) => `t.status = ${p}`, 'paid'), check((p) => `t.n > ${p}`, 1), check((p) => `t.status = ${p}`, null)];
    const q = batchQuery(checks, ids);
    assert.match(q.text, /^SELECT t\.id::text AS id, \(t\.status = \$2\) IS TRUE AS f0, \(t\.n > \$3\) IS TRUE AS f1, \(t\.status = \$4\) IS TRUE AS f2 FROM orders t WHERE t\.id = ANY\(\$1::uuid\[\]\) AND t\.deleted IS NOT TRUE$/);
    let queries = 0;
    const m = await evaluateChecks(async (text, values) => (queries++, db.query(text, values)), checks, [...ids, randomUUID(), 'not-a-uuid'], (err) => assert.fail(String(err)));
    assert.equal(queries, 1);
    assert.deepEqual([...m.get(checks[0]!.key)!], [ids[0]]);
    assert.deepEqual([...m.get(checks[1]!.key)!], [ids[1]]);
    assert.deepEqual([...m.get(checks[2]!.key)!], []);
  });

  it('chunks at the column and parameter bounds', () => {
    const many = Array.from({ length: 250 }, (_, i) => check((p) => `t.n = ${p}`, i));
    assert.deepEqual(chunkChecks(many).map((c) => c.length), [100, 100, 50]);
    const wide = Array.from({ length: 5 }, (_, i) => ({ ...check((p) => `t.n = ${p}`, i), paramCount: 4 }));
    assert.deepEqual(chunkChecks(wide, 100, 10).map((c) => c.length), [2, 2, 1]);
  });

  it('a broken filter matches nothing; the rest of its chunk still evaluates', async () => {
    const good = check((p) => `t.status = ${p}`, 'open');
    const broken = check((p) => `t.nope = ${p}`, 'x');
    const failures: unknown[] = [];
    const m = await evaluateChecks((text, values) => db.query(text, values), [good, broken], ids, (err) => failures.push(err));
    assert.deepEqual([...m.get(good.key)!], [ids[1]]);
    assert.deepEqual([...m.get(broken.key)!], []);
    assert.equal(failures.length, 1);
  });
});
