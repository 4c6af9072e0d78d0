/**
 * Forged keyset cursors. A cursor is base64url JSON `{ h, v, p }` whose hash
 * `h` covers only public things (entity, filter, sort), so an attacker can
 * decode a real cursor, replace its values and re-encode it. Every value is
 * checked against its sort key's field type: 422 Query.InvalidCursor, never
 * a database error (a boolean for a DateTime key was a 500 on PGlite).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapProject, defineEntity, errorOf, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';

interface Cursor { h: string; v: unknown[]; p: number }
const decode = (text: string): Cursor => JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
const encode = (c: unknown): string => Buffer.from(JSON.stringify(c)).toString('base64url');

/** Values of the wrong kind for every key, plus per-type values of the right kind that the column cannot hold. */
const ALWAYS_BAD: unknown[] = [{}, [], [1], { a: 1 }];
const BAD: Record<string, unknown[]> = {
  i: [true, false, 1e308, -1e308, 1.5, 2147483648, '1', 'x'],
  d: [true, 'abc', '1e5x', '', 'NaN'],
  dt: [true, false, 1e308, 0, 'yesterday', '2023-02-30T00:00:00Z', '2023-01-01T00:00:00+20:00', '10000-01-01T00:00:00Z', ''],
  ins: [true, 1e308, 'not a time', '2023-13-01T00:00:00Z'],
  s: [true, 1e308, 7, 'nul\u0000byte'],
  sid: [true, 1e308, '', 'x'.repeat(256)],
  e: [true, 1e308, 'gold', ''],
  b: [1, 0, 'true', 1e308],
  ref: [true, 1e308, 'not-a-uuid', ''],
  createdAt: [true, false, 1e308, 'not a time', null],
};

forEachBackend('forged cursors', (backend) => {
  let server: TestServer;
  let client: Client;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    client = p.client;
    await defineEntity(client, { entityName: 'Target', fields: [{ name: 'name', type: 'String', nullable: false }] });
    await defineEntity(client, {
      entityName: 'Thing',
      fields: [
        { name: 'i', type: 'Int', nullable: true },
        { name: 'd', type: 'Decimal', nullable: true },
        { name: 'dt', type: 'DateTime', nullable: true },
        { name: 'ins', type: 'Instant', nullable: true },
        { name: 's', type: 'String', nullable: true },
        { name: 'sid', type: 'ID', nullable: true },
        { name: 'e', type: 'Enum', nullable: true, values: ['bronze', 'silver'] },
        { name: 'b', type: 'Boolean', nullable: false, default: false },
        { name: 'ref', type: 'ID', nullable: true, references: 'Target' },
      ],
    });
    const target = await client.post('/api/targets', { name: 't' });
    expectStatus(target, 201);
    for (let n = 0; n < 3; n++) {
      const r = await client.post('/api/things', {
        i: n, d: `${n}.50`, dt: `2024-01-0${n + 1}T00:00:00Z`, ins: `2024-02-0${n + 1}T10:00:00.123456Z`, s: `s${n}`, sid: `id-${n}`,
        e: n % 2 === 0 ? 'bronze' : 'silver', b: n % 2 === 0, ref: target.body.data.id,
      });
      expectStatus(r, 201);
    }
  });
  after(async () => {
    await server?.close();
  });

  const refused = async (path: string, what: string): Promise<void> => {
    const r = await client.get(path);
    assert.ok(r.status < 500, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
    assert.equal(r.status, 422, `${what}: ${r.text.slice(0, 300)}`);
    const e = errorOf(r);
    assert.equal(e.code, 'VALIDATION_FAILED', what);
    assert.equal(e.reasonCode, 'Query.InvalidCursor', what);
    assert.equal(e.field, 'cursor', what);
  };

  it('every sortable type and the id tie-breaker: real cursors page on, forged values are 422 Query.InvalidCursor', async () => {
    for (const key of Object.keys(BAD)) {
      for (const sort of [key, `-${key}`]) {
        const first = await client.get(`/api/things?sort=${sort}&pageSize=1`);
        expectStatus(first, 200);
        const next = first.body.page.next as string;
        assert.equal(typeof next, 'string', `sort=${sort}: a next cursor`);
        // The real cursor round-trips whatever the type's wire form (numeric text, microseconds, booleans).
        const second = await client.get(`/api/things?sort=${sort}&pageSize=1&cursor=${next}`);
        expectStatus(second, 200);
        assert.notEqual(second.body.data[0].id, first.body.data[0].id, `sort=${sort}: the second page moves on`);
        const real = decode(next);
        assert.equal(real.v.length, 2, `sort=${sort}: one value per key plus id`);
        for (const junk of [...BAD[key]!, ...ALWAYS_BAD]) {
          await refused(`/api/things?sort=${sort}&pageSize=1&cursor=${encode({ ...real, v: [junk, real.v[1]] })}`, `sort=${sort} value ${JSON.stringify(junk)}`);
        }
        for (const junk of ['not-a-uuid', true, 1e308, null, '', ...ALWAYS_BAD]) {
          await refused(`/api/things?sort=${sort}&pageSize=1&cursor=${encode({ ...real, v: [real.v[0], junk] })}`, `sort=${sort} id ${JSON.stringify(junk)}`);
        }
      }
    }
  });

  it('the default sort (createdAt, id), null in a nullable key, and forged page numbers', async () => {
    const first = await client.get('/api/things?pageSize=1');
    const real = decode(first.body.page.next);
    await refused(`/api/things?pageSize=1&cursor=${encode({ ...real, v: [true, false] })}`, 'default sort [true, false]');
    await refused(`/api/things?pageSize=1&cursor=${encode({ ...real, v: [1e308, real.v[1]] })}`, 'default sort [1e308, id]');
    for (const p of [0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER, '2', null]) {
      await refused(`/api/things?pageSize=1&cursor=${encode({ ...real, p })}`, `page ${JSON.stringify(p)}`);
    }
    // A nullable key may carry null (rows with no value sort last ascending).
    const byI = decode((await client.get('/api/things?sort=i&pageSize=1')).body.page.next);
    const afterNull = await client.get(`/api/things?sort=i&pageSize=1&cursor=${encode({ ...byI, v: [null, byI.v[1]] })}`);
    expectStatus(afterNull, 200);
    // A legal value of the right type that matches no row is just a position.
    const far = await client.get(`/api/things?sort=i&pageSize=1&cursor=${encode({ ...byI, v: [2147483647, '00000000-0000-4000-8000-000000000000'] })}`);
    expectStatus(far, 200);
  });
});
