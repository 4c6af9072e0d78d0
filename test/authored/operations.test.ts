/**
 * Authored operations (CONTRACT "Operations", "Handlers" → Authority): handlers
 * declared through `POST /api/Schema/handlers` and run in the real sandbox
 * pool, called over REST on the real server. A CoreHandler's writes commit
 * together or not at all and it reads its own writes; an EdgeHandler cannot
 * write; `ctx.db` acts with the caller's grants and row policy; input, output,
 * unknown ids, the invoke grant and Idempotency-Key answer as the contract says.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { declareHandler, userWith } from './operations-support.js';

const OWN = { owner: { eq: { $actor: 'subjectId' } } };
const countWhere = async (c: Client, filter: unknown): Promise<number> => {
  const r = await c.get(`/api/orders/count?filter=${encodeURIComponent(JSON.stringify(filter))}`);
  expectStatus(r, 200);
  return Number(r.body.data.count);
};

const HANDLERS = [
  {
    name: 'createTwoThenThrow', surface: 'CoreHandler' as const,
    source: `export default async function (ctx, input) {
  await ctx.db.orders.create({ owner: input.owner, total: input.total });
  await ctx.db.orders.create({ owner: input.owner, total: input.total });
  throw new Error('boom after two creates');
}`,
    operation: { input: { type: 'object', required: ['owner', 'total'] } },
  },
  {
    name: 'writeRead', surface: 'CoreHandler' as const,
    source: `export default async function (ctx, input) {
  const made = await ctx.db.orders.create({ owner: input.owner, total: input.total });
  const got = await ctx.db.orders.get(made.data.id);
  const n = await ctx.db.orders.count({ total: { eq: input.total } });
  const page = await ctx.db.orders.list({ filter: { total: { eq: input.total } } });
  return { id: made.data.id, readBack: got.data.total, count: n.data.count, listed: page.data.map((o) => o.id) };
}`,
    operation: { input: { type: 'object', required: ['owner', 'total'] } },
  },
  {
    name: 'edgeWrite', surface: 'EdgeHandler' as const,
    source: `export default async function (ctx, input) {
  await ctx.db.orders.create({ owner: input.owner, total: 5 });
  return 'written';
}`,
    operation: { input: { type: 'object' } },
  },
  {
    name: 'probeOrders', surface: 'CoreHandler' as const,
    source: `export default async function (ctx) {
  try {
    const r = await ctx.db.orders.list({ sort: 'total' });
    return { ok: true, owners: r.data.map((o) => o.owner) };
  } catch (e) {
    return { ok: false, code: e.code, reasonCode: e.reasonCode, status: e.status };
  }
}`,
    operation: { input: {} },
  },
  {
    name: 'doubler', surface: 'CoreHandler' as const,
    source: `export default async function (ctx, input) {
  return input.total === 13 ? { doubled: 'thirteen' } : { doubled: input.total * 2 };
}`,
    operation: {
      input: { type: 'object', required: ['total'], properties: { total: { type: 'integer', minimum: 0 } } },
      output: { type: 'object', required: ['doubled'], properties: { doubled: { type: 'integer' } } },
    },
  },
  {
    name: 'touch', surface: 'CoreHandler' as const,
    source: `export default async function (ctx, input) {
  await ctx.db.orders.create({ owner: input.owner, total: 99 });
  const row = await ctx.db.orders.get(ctx.id);
  return { id: ctx.id, total: row.data.total };
}`,
    operation: { entity: 'Order', input: { type: 'object', required: ['owner'] } },
  },
  {
    name: 'makeOne', surface: 'CoreHandler' as const,
    source: `export default async function (ctx, input) {
  const made = await ctx.db.orders.create({ owner: input.owner, total: input.total });
  return { id: made.data.id };
}`,
    operation: { input: { type: 'object', required: ['owner', 'total'] } },
  },
  {
    name: 'createThenAbort', surface: 'CoreHandler' as const,
    source: `export default async function (ctx, input) {
  const made = await ctx.db.orders.create({ owner: input.owner, total: 1 });
  ctx.error('CONFLICT', 'Test.Abort', made.data.id);
}`,
    operation: { input: { type: 'object', required: ['owner'] } },
  },
  {
    name: 'branchNames', surface: 'ManagementHandler' as const,
    source: `export default async function (ctx) {
  const listed = await ctx.platform.branches.list();
  return { count: listed.data.length, at: Date.now() };
}`,
    operation: { input: {} },
  },
];

forEachBackend('authored operations', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'owner', type: 'ID', nullable: false }, { name: 'total', type: 'Int', nullable: true }] });
    for (const h of HANDLERS) await declareHandler(admin, h);
  });
  after(async () => {
    await server?.close();
  });

  it('a CoreHandler that creates two rows and then throws writes nothing: 502 BRIDGE_ERROR Handler.Threw with the message only', async () => {
    const r = await admin.post('/api/operations/createTwoThenThrow', { owner: randomUUID(), total: 4101 });
    const e = expectError(r, 502, 'BRIDGE_ERROR', 'Handler.Threw');
    assert.equal(e.message, 'boom after two creates');
    assert.doesNotMatch(r.text, /at .*\(|\.js:\d+/, 'no stack in the answer');
    assert.equal(await countWhere(admin, { total: { eq: 4101 } }), 0);
  });

  it('a CoreHandler reads its own writes, and what it wrote is committed when it returns', async () => {
    const r = await admin.post('/api/operations/writeRead', { owner: randomUUID(), total: 4102 });
    expectStatus(r, 200);
    assert.equal(r.body.surface, 'Operation');
    const out = r.body.data;
    assert.equal(out.readBack, 4102);
    assert.equal(out.count, 1);
    assert.deepEqual(out.listed, [out.id]);
    expectStatus(await admin.get(`/api/orders/${out.id}`), 200);
  });

  it('ctx.error answers that canonical error; the rolled-back row leaves no event, the committed one does', async () => {
    const aborted = expectError(await admin.post('/api/operations/createThenAbort', { owner: randomUUID() }), 409, 'CONFLICT', 'Test.Abort');
    const rolledBack = aborted.message;
    expectError(await admin.get(`/api/orders/${rolledBack}`), 404, 'NOT_FOUND', 'Order.NotFound');
    const r = await admin.post('/api/operations/writeRead', { owner: randomUUID(), total: 4103 });
    expectStatus(r, 200);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ev = await admin.get(`/api/events?pageSize=200&filter=${encodeURIComponent(JSON.stringify({ type: 'entity.Order.created' }))}`);
      expectStatus(ev, 200);
      const ids = (ev.body.data as Array<{ data: { entityId: string } }>).map((e) => e.data.entityId);
      if (ids.includes(r.body.data.id)) {
        assert.ok(!ids.includes(rolledBack), 'no event for the row that was rolled back');
        break;
      }
      if (Date.now() > deadline) assert.fail('the committed row\'s event never reached the log');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it('an EdgeHandler\'s ctx.db write is refused: 403 ACCESS_DENIED Handler.ReadOnlySurface, nothing written', async () => {
    const owner = randomUUID();
    expectError(await admin.post('/api/operations/edgeWrite', { owner }), 403, 'ACCESS_DENIED', 'Handler.ReadOnlySurface');
    assert.equal(await countWhere(admin, { owner: { eq: owner } }), 0);
  });

  it('ctx.db acts with the caller\'s authority: no grant on the entity → refused inside the handler; a row policy applies', async () => {
    const invoke = { grant: 'operation:probeOrders:invoke' };
    const bare = await userWith(admin, projectId, [invoke]);
    const own = await userWith(admin, projectId, [invoke, { grant: 'entity:Order:read', rowFilter: OWN }]);
    for (const owner of [own.subjectId, own.subjectId, randomUUID()]) expectStatus(await admin.post('/api/orders', { owner, total: 4104 }), 201);
    const refused = await bare.client.post('/api/operations/probeOrders', {});
    expectStatus(refused, 200);
    assert.deepEqual(refused.body.data, { ok: false, code: 'ACCESS_DENIED', reasonCode: 'ExposureBinding.RequiredGrantMissing', status: 403 });
    const seen = await own.client.post('/api/operations/probeOrders', {});
    expectStatus(seen, 200);
    assert.equal(seen.body.data.ok, true);
    assert.deepEqual(seen.body.data.owners, [own.subjectId, own.subjectId], 'only the caller\'s own rows');
  });

  it('the input is validated before the handler runs (422 with field); an output that does not match → 502 Handler.OutputInvalid', async () => {
    expectError(await admin.post('/api/operations/doubler', { total: 'x' }), 422, 'VALIDATION_FAILED', 'Operation.InvalidInput', 'total');
    expectError(await admin.post('/api/operations/doubler', { total: -1 }), 422, 'VALIDATION_FAILED', 'Operation.InvalidInput', 'total');
    expectError(await admin.post('/api/operations/doubler', { total: 13 }), 502, 'BRIDGE_ERROR', 'Handler.OutputInvalid');
    const ok = await admin.post('/api/operations/doubler', { total: 4 });
    expectStatus(ok, 200);
    assert.deepEqual(ok.body.data, { doubled: 8 });
  });

  it('an instance operation: an unknown id → 404 before the handler runs; a known one runs with ctx.id', async () => {
    const owner = randomUUID();
    expectError(await admin.post(`/api/orders/${randomUUID()}/touch`, { owner }), 404, 'NOT_FOUND', 'Order.NotFound');
    assert.equal(await countWhere(admin, { owner: { eq: owner } }), 0, 'the handler never ran');
    const row = await admin.post('/api/orders', { owner: randomUUID(), total: 4106 });
    expectStatus(row, 201);
    const r = await admin.post(`/api/orders/${row.body.data.id}/touch`, { owner });
    expectStatus(r, 200);
    assert.deepEqual(r.body.data, { id: row.body.data.id, total: 4106 });
    assert.equal(await countWhere(admin, { owner: { eq: owner } }), 1);
  });

  it('without operation:<name>:invoke → 403 ExposureBinding.RequiredGrantMissing; an unknown name → 404 Operation.Unknown', async () => {
    const user = await userWith(admin, projectId, [{ grant: 'entity:Order:*' }]);
    const e = expectError(await user.client.post('/api/operations/writeRead', { owner: randomUUID(), total: 4107 }), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(e.missingGrants, ['operation:writeRead:invoke']);
    assert.equal(await countWhere(admin, { total: { eq: 4107 } }), 0);
    expectError(await admin.post('/api/operations/noSuchThing', {}), 404, 'NOT_FOUND', 'Operation.Unknown');
    const granted = await userWith(admin, projectId, [{ grant: 'entity:Order:*' }, { grant: 'operation:*:invoke' }]);
    expectStatus(await granted.client.post('/api/operations/writeRead', { owner: randomUUID(), total: 4108 }), 200);
  });

  it('Idempotency-Key: the same key and body replay the first answer without running again; another body → 409', async () => {
    const key = `k-${randomUUID()}`;
    const body = { owner: randomUUID(), total: 4109 };
    const first = await admin.post('/api/operations/makeOne', body, { 'Idempotency-Key': key });
    expectStatus(first, 200);
    const again = await admin.post('/api/operations/makeOne', body, { 'Idempotency-Key': key });
    expectStatus(again, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body.data, first.body.data);
    assert.equal(await countWhere(admin, { total: { eq: 4109 } }), 1);
    expectError(await admin.post('/api/operations/makeOne', { ...body, total: 4110 }, { 'Idempotency-Key': key }), 409, 'CONFLICT', 'Idempotency.KeyReused');
  });

  it('a ManagementHandler runs only for the platform admin and reaches ctx.platform; its Idempotency-Key is claimed first', async () => {
    const user = await userWith(admin, projectId, [{ grant: 'operation:branchNames:invoke' }]);
    expectError(await user.client.post('/api/operations/branchNames', {}), 403, 'ACCESS_DENIED', 'Handler.AdminOnly');
    const key = `k-${randomUUID()}`;
    const first = await admin.post('/api/operations/branchNames', {}, { 'Idempotency-Key': key });
    expectStatus(first, 200);
    assert.equal(typeof first.body.data.count, 'number');
    const again = await admin.post('/api/operations/branchNames', {}, { 'Idempotency-Key': key });
    expectStatus(again, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body.data, first.body.data, 'the first answer, not a second run');
  });

  it('the publication\'s OpenAPI document lists each operation with its operationId and schemas', async () => {
    const doc = await admin.get('/api/openapi.json');
    expectStatus(doc, 200);
    const project = doc.body.paths['/operations/doubler'].post;
    assert.equal(project.operationId, 'Operation.doubler');
    assert.deepEqual(project.requestBody.content['application/json'].schema, HANDLERS[4]!.operation.input);
    assert.deepEqual(project.responses['200'].content['application/json'].schema.properties.data, HANDLERS[4]!.operation.output);
    assert.equal(doc.body.paths['/orders/{id}/touch'].post.operationId, 'Entity.Order.touch');
  });
});
