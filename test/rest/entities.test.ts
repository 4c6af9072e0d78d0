import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bootstrapProject, defineEntity, errorOf, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';

const q = (o: unknown): string => encodeURIComponent(JSON.stringify(o));

forEachBackend('entity REST API', (backend) => {
  let server: TestServer;
  let api: Client;

  before(async () => {
    server = await startServer({ backend });
    ({ client: api } = await bootstrapProject(server.url, server.adminToken));
    await defineEntity(api, {
      entityName: 'Customer',
      fields: [
        { name: 'email', type: 'String', nullable: false, unique: true },
        { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'], default: 'free' },
        { name: 'age', type: 'Int', nullable: true },
      ],
    });
    await defineEntity(api, {
      entityName: 'Order',
      softDelete: true,
      fields: [
        { name: 'total', type: 'Decimal', nullable: false },
        { name: 'status', type: 'Enum', nullable: false, values: ['open', 'paid', 'void'] },
        { name: 'placedAt', type: 'DateTime', nullable: true },
        { name: 'customer', type: 'ID', nullable: true, references: 'Customer' },
        { name: 'meta', type: 'JSON', nullable: true },
      ],
    });
  });
  after(() => server.close());

  const customer = async (email: string, extra: Record<string, unknown> = {}) => {
    const r = await api.post('/api/customers', { email, ...extra });
    assert.equal(r.status, 201, r.text);
    return r.body.data as Record<string, any>;
  };

  it('creates a row with generated fields and the single envelope', async () => {
    const r = await api.post('/api/customers', { email: 'ann@example.com', age: 41 });
    assert.equal(r.status, 201);
    const row = r.body.data;
    assert.match(row.id, /^[0-9a-f-]{36}$/);
    assert.equal(row.email, 'ann@example.com');
    assert.equal(row.tier, 'free', 'column default applies');
    assert.equal(row.age, 41);
    assert.match(row.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    assert.equal(typeof row.concurrencyToken, 'string');
    assert.equal(r.body.meta.correlationId, r.headers.get('x-service-correlation-id'));
    assert.equal(r.headers.get('etag'), `"${row.concurrencyToken}"`);
  });

  it('keeps Decimal precision and JSON values', async () => {
    const c = await customer('dec@example.com');
    const r = await api.post('/api/orders', { total: '12345678901234567890.125', status: 'open', customer: c.id, meta: { tags: ['a', 'b'], n: 1.5 }, placedAt: '2026-01-02T03:04:05.123Z' });
    assert.equal(r.status, 201, r.text);
    const read = await api.get(`/api/orders/${r.body.data.id}`);
    assert.equal(read.body.data.total, '12345678901234567890.125');
    assert.deepEqual(read.body.data.meta, { tags: ['a', 'b'], n: 1.5 });
    assert.equal(read.body.data.placedAt, '2026-01-02T03:04:05.123Z');
  });

  it('reads one row with ETag, and 404 with an entity reason code for a missing one', async () => {
    const c = await customer('read@example.com');
    const r = await api.get(`/api/customers/${c.id}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, c);
    assert.equal(r.headers.get('etag'), `"${c.concurrencyToken}"`);
    const missing = await api.get('/api/customers/00000000-0000-4000-8000-000000000000');
    assert.equal(missing.status, 404);
    assert.equal(errorOf(missing).reasonCode, 'Customer.NotFound');
    const notUuid = await api.get('/api/customers/not-a-uuid');
    assert.equal(notUuid.status, 404);
  });

  it('rejects a duplicate unique value with 409 and names the field', async () => {
    await customer('dup@example.com');
    const r = await api.post('/api/customers', { email: 'dup@example.com' });
    assert.equal(r.status, 409);
    const e = errorOf(r);
    assert.equal(e.code, 'CONFLICT');
    assert.equal(e.reasonCode, 'CustomerValidation.UniqueViolation');
    assert.equal(e.field, 'email');
  });

  it('validates input: required, enum, unknown and read-only fields → 422', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{}, 'CustomerValidation.Required', 'email'],
      [{ email: 'x@y.z', tier: 'gold' }, 'CustomerValidation.InvalidValue', 'tier'],
      [{ email: 'x@y.z', nope: 1 }, 'CustomerValidation.UnknownField', 'nope'],
      [{ email: 'x@y.z', id: '00000000-0000-4000-8000-000000000000' }, 'CustomerValidation.ReadOnlyField', 'id'],
      [{ email: 'x@y.z', age: 1.5 }, 'CustomerValidation.InvalidValue', 'age'],
      [{ email: 'x@y.z', age: 2 ** 31 }, 'CustomerValidation.InvalidValue', 'age'],
      [{ email: 42 }, 'CustomerValidation.InvalidValue', 'email'],
    ];
    for (const [body, reason, field] of cases) {
      const r = await api.post('/api/customers', body);
      assert.equal(r.status, 422, JSON.stringify(body));
      const e = errorOf(r);
      assert.equal(e.code, 'VALIDATION_FAILED');
      assert.equal(e.reasonCode, reason, JSON.stringify(body));
      assert.equal(e.field, field);
    }
  });

  it('rejects a reference to a missing row with 422 and restricts deleting a referenced row with 409', async () => {
    const bad = await api.post('/api/orders', { total: '1', status: 'open', customer: '00000000-0000-4000-8000-000000000000' });
    assert.equal(bad.status, 422);
    assert.equal(errorOf(bad).reasonCode, 'OrderValidation.ReferenceNotFound');
    const c = await customer('fk@example.com');
    const o = await api.post('/api/orders', { total: '1', status: 'open', customer: c.id });
    assert.equal(o.status, 201);
    const del = await api.delete(`/api/customers/${c.id}`);
    assert.equal(del.status, 409);
    assert.equal(errorOf(del).reasonCode, 'CustomerValidation.ReferencedByOtherRows');
    assert.equal((await api.get(`/api/customers/${c.id}`)).status, 200, 'nothing deleted');
  });

  it('PATCH updates fields and honours If-Match', async () => {
    const c = await customer('patch@example.com');
    const stale = c.concurrencyToken;
    const ok = await api.patch(`/api/customers/${c.id}`, { age: 30 }, { 'if-match': `"${stale}"` });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.data.age, 30);
    assert.notEqual(ok.body.data.concurrencyToken, stale);
    assert.equal(ok.body.data.email, 'patch@example.com');
    const conflict = await api.patch(`/api/customers/${c.id}`, { age: 31 }, { 'if-match': `"${stale}"` });
    assert.equal(conflict.status, 409);
    assert.equal(errorOf(conflict).reasonCode, 'CustomerValidation.ConcurrencyTokenMismatch');
    assert.equal((await api.get(`/api/customers/${c.id}`)).body.data.age, 30, 'the mismatched write did not apply');
    const noMatch = await api.patch(`/api/customers/${c.id}`, { age: 32 });
    assert.equal(noMatch.status, 200, 'without If-Match the write applies');
    assert.equal((await api.patch('/api/customers/00000000-0000-4000-8000-000000000000', { age: 1 })).status, 404);
  });

  it('PUT replaces the whole row: absent nullable fields become null, defaults reapply, required ones are required', async () => {
    const c = await customer('put@example.com', { tier: 'pro', age: 50 });
    const r = await api.put(`/api/customers/${c.id}`, { email: 'put2@example.com' });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.email, 'put2@example.com');
    assert.equal(r.body.data.age, null);
    assert.equal(r.body.data.tier, 'free');
    const missing = await api.put(`/api/customers/${c.id}`, { age: 3 });
    assert.equal(missing.status, 422);
    assert.equal(errorOf(missing).reasonCode, 'CustomerValidation.Required');
  });

  it('soft-deletes by default and hard-deletes with force=true (admin)', async () => {
    const o = (await api.post('/api/orders', { total: '5', status: 'open' })).body.data;
    const del = await api.delete(`/api/orders/${o.id}`);
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await api.get(`/api/orders/${o.id}`)).status, 404);
    assert.equal((await api.delete(`/api/orders/${o.id}`)).status, 404, 'already deleted');
    const hard = await api.delete(`/api/orders/${o.id}?force=true`);
    assert.equal(hard.status, 204, 'force removes a soft-deleted row for good');
    const c = await customer('hard@example.com');
    assert.equal((await api.delete(`/api/customers/${c.id}`)).status, 204);
    assert.equal((await api.get(`/api/customers/${c.id}`)).status, 404);
  });

  it('lists with filter, sort, fields, include and totals', async () => {
    const c = await customer('list@example.com', { tier: 'pro' });
    for (const [total, status] of [['10', 'open'], ['20', 'paid'], ['30', 'open'], ['40', 'void']]) {
      assert.equal((await api.post('/api/orders', { total, status, customer: c.id })).status, 201);
    }
    const filter = { customer: { email: { eq: 'list@example.com' } }, status: { in: ['open', 'paid'] } };
    const r = await api.get(`/api/orders?filter=${q(filter)}&sort=-total&fields=total,status&include=customer&includeTotal=true`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.data.map((o: any) => o.total), ['30', '20', '10']);
    assert.deepEqual(Object.keys(r.body.data[0]).sort(), ['customer', 'id', 'status', 'total']);
    assert.equal(r.body.data[0].customer.email, 'list@example.com');
    assert.equal(r.body.page.totalCount, 3);
    assert.equal(r.body.page.number, 1);
    const between = await api.get(`/api/orders?filter=${q({ total: { between: ['15', '35'] }, customer: { id: { eq: c.id } } })}&sort=total`);
    assert.deepEqual(between.body.data.map((o: any) => o.total), ['20', '30']);
    const or = await api.get(`/api/orders?filter=${q({ or: [{ status: { eq: 'void' } }, { total: { lt: '15' } }], customer: { id: { eq: c.id } } })}&sort=total`);
    assert.deepEqual(or.body.data.map((o: any) => o.total), ['10', '40']);
    const not = await api.get(`/api/orders?filter=${q({ not: { status: { eq: 'open' } }, customer: { id: { eq: c.id } } })}&sort=total`);
    assert.deepEqual(not.body.data.map((o: any) => o.status), ['paid', 'void']);
    const like = await api.get(`/api/customers?filter=${q({ email: { like: 'list@%' } })}`);
    assert.equal(like.body.data.length, 1);
    const nul = await api.get(`/api/orders?filter=${q({ placedAt: { isNull: true }, customer: { id: { eq: c.id } } })}&includeTotal=true`);
    assert.equal(nul.body.page.totalCount, 4);
    const count = await api.get(`/api/orders/count?filter=${q({ customer: { id: { eq: c.id } } })}`);
    assert.deepEqual(count.body.data, { count: 4 });
  });

  it('rejects bad list parameters with 422 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['pageSize=201', 'Query.PageSizeTooLarge'],
      ['pageSize=0', 'Query.InvalidPageSize'],
      ['page=-1', 'Query.InvalidPage'],
      [`filter=${q({ nope: { eq: 1 } })}`, 'Filter.UnknownField'],
      [`filter=${q({ status: { regex: 'x' } })}`, 'Filter.UnknownOperator'],
      [`filter=${q({ total: { gt: 'abc' } })}`, 'Filter.InvalidValue'],
      ['filter=%7Bnot-json', 'Filter.MalformedJson'],
      ['sort=nope', 'Query.UnknownSortField'],
      ['sort=meta', 'Query.UnsortableField'],
      ['fields=nope', 'Query.UnknownField'],
      ['include=nope', 'Query.UnknownRelation'],
      ['cursor=%25%25', 'Query.InvalidCursor'],
    ];
    for (const [query, reason] of cases) {
      const r = await api.get(`/api/orders?${query}`);
      assert.equal(r.status, 422, query);
      assert.equal(errorOf(r).reasonCode, reason, query);
    }
  });

  it('pages by cursor without gaps or repeats while rows are inserted concurrently', async () => {
    const c = await customer('cursor@example.com');
    const created = await api.post('/api/orders/batch', { items: Array.from({ length: 25 }, (_, i) => ({ total: String(i), status: 'open', customer: c.id })) });
    assert.equal(created.status, 201, created.text);
    const filter = q({ customer: { id: { eq: c.id } } });
    const seen: string[] = [];
    let next: string | undefined;
    let page = 0;
    do {
      const r = await api.get(`/api/orders?filter=${filter}&sort=-total&pageSize=7${next === undefined ? '' : `&cursor=${encodeURIComponent(next)}`}`);
      assert.equal(r.status, 200, r.text);
      page++;
      assert.equal(r.body.page.number, page);
      seen.push(...r.body.data.map((o: any) => o.id));
      next = r.body.page.next;
      // A row sorted before the cursor position, inserted mid-walk, must not shift later pages.
      await api.post('/api/orders', { total: '1000', status: 'open', customer: c.id });
    } while (next !== undefined);
    const original = new Set(created.body.data.map((o: any) => o.id));
    assert.equal(seen.filter((id) => original.has(id)).length, 25, 'every original row once');
    assert.equal(new Set(seen).size, seen.length, 'no repeats');
    const cursor = (await api.get(`/api/orders?filter=${filter}&pageSize=2`)).body.page.next;
    const mismatch = await api.get(`/api/orders?sort=total&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(mismatch.status, 422);
    assert.equal(errorOf(mismatch).reasonCode, 'Query.CursorMismatch');
  });

  it('offset pages with page/pageSize', async () => {
    const c = await customer('offset@example.com');
    await api.post('/api/orders/batch', { items: Array.from({ length: 5 }, (_, i) => ({ total: String(i), status: 'paid', customer: c.id })) });
    const filter = q({ customer: { id: { eq: c.id } } });
    const p2 = await api.get(`/api/orders?filter=${filter}&sort=total&page=2&pageSize=2`);
    assert.deepEqual(p2.body.data.map((o: any) => o.total), ['2', '3']);
    assert.equal(p2.body.page.number, 2);
    assert.equal(p2.body.page.size, 2);
  });

  it('replays a create with the same Idempotency-Key and body, and 409s a different body', async () => {
    const key = `key-${Math.random()}`;
    const first = await api.post('/api/customers', { email: 'idem@example.com' }, { 'idempotency-key': key });
    assert.equal(first.status, 201);
    const again = await api.post('/api/customers', { email: 'idem@example.com' }, { 'idempotency-key': key });
    assert.equal(again.status, 201);
    assert.equal(again.body.data.id, first.body.data.id);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const other = await api.post('/api/customers', { email: 'other@example.com' }, { 'idempotency-key': key });
    assert.equal(other.status, 409);
    assert.equal(errorOf(other).reasonCode, 'Idempotency.KeyReused');
    const list = await api.get(`/api/customers?filter=${q({ email: { in: ['idem@example.com', 'other@example.com'] } })}&includeTotal=true`);
    assert.equal(list.body.page.totalCount, 1, 'one row written');
    const racing = await Promise.all(Array.from({ length: 5 }, () => api.post('/api/customers', { email: 'race@example.com' }, { 'idempotency-key': `race-${key}` })));
    assert.deepEqual(racing.map((r) => r.status), [201, 201, 201, 201, 201]);
    assert.equal(new Set(racing.map((r) => r.body.data.id)).size, 1, 'concurrent duplicates share one row');
  });

  it('batch create, update and delete are all-or-nothing and bounded', async () => {
    const bad = await api.post('/api/customers/batch', { items: [{ email: 'b1@example.com' }, { email: 'b2@example.com', tier: 'x' }] });
    assert.equal(bad.status, 422);
    assert.equal(errorOf(bad).field, 'items[1].tier');
    assert.equal((await api.get(`/api/customers?filter=${q({ email: { eq: 'b1@example.com' } })}`)).body.data.length, 0);
    const dupInBatch = await api.post('/api/customers/batch', { items: [{ email: 'b3@example.com' }, { email: 'b3@example.com' }] });
    assert.equal(dupInBatch.status, 409);
    assert.equal((await api.get(`/api/customers?filter=${q({ email: { eq: 'b3@example.com' } })}`)).body.data.length, 0);
    const tooMany = await api.post('/api/customers/batch', { items: Array.from({ length: 1001 }, (_, i) => ({ email: `m${i}@x.io` })) });
    assert.equal(tooMany.status, 422);
    assert.equal(errorOf(tooMany).reasonCode, 'Batch.TooLarge');
    const ok = await api.post('/api/customers/batch', { items: [{ email: 'b4@example.com' }, { email: 'b5@example.com', age: 9 }] });
    assert.equal(ok.status, 201);
    const [a, b] = ok.body.data;
    const upd = await api.patch('/api/customers/batch', { items: [{ id: a.id, age: 1 }, { id: b.id, tier: 'pro' }] });
    assert.equal(upd.status, 200, upd.text);
    assert.deepEqual(upd.body.data.map((r: any) => [r.age, r.tier]), [[1, 'free'], [9, 'pro']]);
    const updMissing = await api.patch('/api/customers/batch', { items: [{ id: a.id, age: 2 }, { id: '00000000-0000-4000-8000-000000000000', age: 3 }] });
    assert.equal(updMissing.status, 404);
    assert.equal((await api.get(`/api/customers/${a.id}`)).body.data.age, 1, 'first update rolled back');
    const del = await api.post('/api/customers/batch/delete', { ids: [a.id, b.id] });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body.data, { deleted: 2 });
  });

  it('lists, attaches and detaches relations from both sides', async () => {
    const c = await customer('rel@example.com');
    const o = (await api.post('/api/orders', { total: '7', status: 'open' })).body.data;
    const attach = await api.post(`/api/customers/${c.id}/orders`, { relatedId: o.id });
    assert.equal(attach.status, 201, attach.text);
    assert.equal(attach.body.data.customer, c.id);
    const many = await api.get(`/api/customers/${c.id}/orders`);
    assert.deepEqual(many.body.data.map((r: any) => r.id), [o.id]);
    const one = await api.get(`/api/orders/${o.id}/customer`);
    assert.equal(one.body.data.id, c.id);
    const included = await api.get(`/api/customers/${c.id}?include=orders`);
    assert.deepEqual(included.body.data.orders.map((r: any) => r.id), [o.id]);
    const detach = await api.delete(`/api/orders/${o.id}/customer/${c.id}`);
    assert.equal(detach.status, 204);
    assert.equal((await api.get(`/api/orders/${o.id}/customer`)).body.data, null);
    assert.equal((await api.delete(`/api/orders/${o.id}/customer/${c.id}`)).status, 404, 'no longer linked');
    const reattach = await api.post(`/api/orders/${o.id}/customer`, { relatedId: c.id });
    assert.equal(reattach.status, 201);
    assert.equal((await api.get(`/api/orders/${o.id}/nope`)).status, 404);
  });

  it('serves the same routes under /v1 and answers unknown routes with Route.Unknown', async () => {
    const c = await customer('v1@example.com');
    const r = await api.get(`/v1/customers/${c.id}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.data.id, c.id);
    const unknown = await api.get('/api/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(errorOf(unknown).reasonCode, 'Route.Unknown');
    const outside = await api.get('/elsewhere');
    assert.equal(outside.status, 404);
    assert.equal(errorOf(outside).reasonCode, 'Route.Unknown');
  });

  it('requires a bearer and rejects an invalid one with 401', async () => {
    const anon = api.with({ token: null });
    const r = await anon.get('/api/customers');
    assert.equal(r.status, 401);
    assert.equal(errorOf(r).reasonCode, 'Auth.MissingBearer');
    const bad = await api.with({ token: 'not-a-valid-token' }).get('/api/customers');
    assert.equal(bad.status, 401);
    assert.equal(errorOf(bad).reasonCode, 'Auth.InvalidToken');
  });
});
