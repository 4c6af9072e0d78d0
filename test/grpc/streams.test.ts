/**
 * gRPC streaming calls against a real node (CONTRACT: gRPC): StreamList
 * (every row in order, flow control, cancel and deadline), BatchCreate (one
 * transaction) and Watch (change events through the realtime hub, names only).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { PLATFORM_SCHEMA } from '../../storage/index.js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, collect, fetchProto, loadProto, metadata, serviceTrailers, unary } from './support.js';

const ITEM = {
  entityName: 'Item',
  fields: [
    { name: 'seq', type: 'Int', nullable: false },
    { name: 'label', type: 'String', nullable: false },
    { name: 'status', type: 'Enum', nullable: false, values: ['open', 'done'], default: 'open' },
  ],
};
const ROWS = 3000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachBackend('gRPC streams', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let project: string;
  let projectId: string;
  let items: any;
  let md: grpc.Metadata;

  /** How many List pages the call with this correlationId queried (its audit rows). */
  async function pagesQueried(correlationId: string): Promise<number> {
    await server.node.services.audit.flush();
    const r = await server.node.services.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${PLATFORM_SCHEMA}.audit WHERE correlation_id = $1 AND operation_id = 'Entity.Item.List'`, [correlationId],
    );
    return Number(r.rows[0]!.n);
  }

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ tenant, project, projectId } = p);
    admin = p.client;
    await defineEntity(admin, ITEM);
    for (let b = 0; b < ROWS / 1000; b++) {
      const batch = Array.from({ length: 1000 }, (_, i) => ({ seq: b * 1000 + i, label: `item ${b * 1000 + i}` }));
      expectStatus(await admin.post('/api/items/batch', { items: batch }), 201);
    }
    items = clientOf(loadProto(await fetchProto(admin)), 'ItemService', server.node.grpcPort);
    md = metadata(server.adminToken, tenant, project);
  });
  after(async () => {
    items?.close();
    await server.close();
  });

  it('StreamList streams every matching row in sort order (page_size is only the batch size)', async () => {
    const all = await collect(items.StreamList({ page_size: 70, sort: '-seq' }, md));
    assert.equal(all.status.code, grpc.status.OK, all.status.details);
    assert.equal(all.items.length, ROWS);
    assert.deepEqual(all.items.map((x: any) => x.seq), Array.from({ length: ROWS }, (_, i) => ROWS - 1 - i));
    const filtered = await collect(items.StreamList({ filter: JSON.stringify({ seq: { lt: 250 } }), sort: 'seq' }, md));
    assert.equal(filtered.items.length, 250);
    assert.equal(filtered.items[249].seq, 249);
    const bad = await collect(items.StreamList({ filter: '{"nope": {"eq": 1}}' }, md));
    assert.equal(bad.status.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(serviceTrailers(bad.status.metadata).code, 'VALIDATION_FAILED');
  });

  it('a slow reader slows the query: paused, the server stops paging; resumed, every row arrives in order', async () => {
    const call = items.StreamList({ page_size: 20, sort: 'seq' }, md);
    call.on('error', () => {});
    const correlation = new Promise<string>((resolve) => call.on('metadata', (m: grpc.Metadata) => resolve(String(m.get('x-service-correlation-id')[0]))));
    const got: number[] = [];
    const done = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('data', (m: any) => {
      got.push(m.seq);
      if (got.length === 1) call.pause();
    });
    const correlationId = await correlation;
    assert.match(correlationId, /^[0-9a-f-]{36}$/);
    await sleep(1500);
    const whilePaused = await pagesQueried(correlationId);
    await sleep(500);
    assert.equal(await pagesQueried(correlationId), whilePaused, 'no page is queried while the reader is paused');
    assert.ok(whilePaused < ROWS / 20 / 2, `paused after ${whilePaused} of ${ROWS / 20} pages`);
    call.resume();
    const status = await done;
    assert.equal(status.code, grpc.status.OK);
    assert.equal(got.length, ROWS);
    assert.deepEqual(got, Array.from({ length: ROWS }, (_, i) => i));
    assert.equal(await pagesQueried(correlationId), ROWS / 20, 'every page once');
  });

  it('a cancelled call and a passed deadline end the stream, and no further page is queried', async () => {
    for (const end of ['cancel', 'deadline'] as const) {
      const call = items.StreamList({ page_size: 20, sort: 'seq' }, md, end === 'deadline' ? { deadline: Date.now() + 700 } : {});
      const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      const correlation = new Promise<string>((resolve) => call.on('metadata', (m: grpc.Metadata) => resolve(String(m.get('x-service-correlation-id')[0]))));
      call.on('error', () => {});
      let n = 0;
      call.on('data', () => {
        if (++n === 1) call.pause();
      });
      const id = await correlation;
      await sleep(300);
      if (end === 'cancel') call.cancel();
      const s = await status;
      assert.equal(s.code, end === 'cancel' ? grpc.status.CANCELLED : grpc.status.DEADLINE_EXCEEDED);
      await sleep(200);
      const before = await pagesQueried(id);
      await sleep(600);
      assert.equal(await pagesQueried(id), before, `${end}: no page after the end`);
      assert.ok(before < ROWS / 20, `${end}: stopped early (${before} pages)`);
    }
  });

  it('BatchCreate writes every item in one transaction, in input order; one invalid item writes nothing', async () => {
    const batch = (inputs: unknown[]): Promise<{ error: any; value: any }> => new Promise((resolve) => {
      const call = items.BatchCreate(md, (error: any, value: any) => resolve({ error, value }));
      for (const x of inputs) call.write(x);
      call.end();
    });
    const ok = await batch([{ seq: 10_001, label: 'a' }, { seq: 10_002, label: 'b', status: 'done' }, { seq: 10_003, label: 'c' }]);
    assert.equal(ok.error, null, ok.error?.message);
    assert.deepEqual(ok.value.items.map((x: any) => [x.seq, x.label, x.status]), [[10_001, 'a', 'open'], [10_002, 'b', 'done'], [10_003, 'c', 'open']]);
    const count = async () => (await admin.get('/api/items/count')).body.data.count;
    const before = await count();
    const bad = await batch([{ seq: 20_001, label: 'x' }, { seq: 20_002 }, { seq: 20_003, label: 'z' }]);
    assert.equal(bad.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(serviceTrailers(bad.error.metadata).code, 'VALIDATION_FAILED');
    assert.equal(await count(), before, 'nothing written');
    const tooMany = await batch(Array.from({ length: 1001 }, (_, i) => ({ seq: 30_000 + i, label: 'x' })));
    assert.equal(tooMany.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(serviceTrailers(tooMany.error.metadata).reasonCode, 'Batch.TooLarge');
    assert.equal(await count(), before);
    const empty = await batch([]);
    assert.equal(empty.error?.code, grpc.status.INVALID_ARGUMENT);
  });

  it('Watch delivers created, updated and deleted changes (names, never values) matching its filter', async () => {
    const call = items.Watch({ filter: JSON.stringify({ status: { eq: 'done' } }) }, md);
    const changes: any[] = [];
    call.on('data', (c: any) => changes.push(c));
    call.on('error', () => {});
    await new Promise((resolve) => call.once('metadata', resolve));
    // A filtered change is checked against the row when it is delivered: each write waits for the change before,
    // so the row still exists (and matches) when its created and updated changes are checked.
    const waitFor = async (n: number) => {
      for (let i = 0; i < 400 && changes.length < n; i++) await sleep(50);
    };
    const skipped = await admin.post('/api/items', { seq: 40_000, label: 'open one' });
    const row = await admin.post('/api/items', { seq: 40_001, label: 'secret label', status: 'done' });
    expectStatus(row, 201);
    await waitFor(1);
    expectStatus(await admin.patch(`/api/items/${row.body.data.id}`, { label: 'renamed' }), 200);
    await waitFor(2);
    expectStatus(await admin.delete(`/api/items/${row.body.data.id}`), 204);
    await waitFor(3);
    call.cancel();
    assert.deepEqual(changes.map((c) => c.kind), ['created', 'updated', 'deleted']);
    for (const c of changes) {
      assert.equal(c.entity_id, row.body.data.id);
      assert.deepEqual(Object.keys(c).sort().filter((k) => !k.startsWith('_')), ['changed_fields', 'entity_id', 'kind'].filter((k) => k !== 'changed_fields' || c.changed_fields !== undefined).sort());
    }
    assert.ok(changes[1].changed_fields.includes('label'), JSON.stringify(changes[1]));
    assert.ok(!JSON.stringify(changes).includes('renamed') && !JSON.stringify(changes).includes('secret label'), 'names only, never values');
    assert.ok(!changes.some((c) => c.entity_id === skipped.body.data.id), 'the filter applies');
  });

  it('Watch by a user without read is PERMISSION_DENIED; a malformed filter is INVALID_ARGUMENT', async () => {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    const denied = await collect(items.Watch({}, metadata(login.body.accessToken, tenant, project)));
    assert.equal(denied.status.code, grpc.status.PERMISSION_DENIED);
    assert.equal(serviceTrailers(denied.status.metadata).code, 'ACCESS_DENIED');
    const bad = await collect(items.Watch({ filter: '{' }, md));
    assert.equal(bad.status.code, grpc.status.INVALID_ARGUMENT);
  });

  it('a Watch ends with PERMISSION_DENIED (Realtime.GrantsChanged) when a grant of its project is deleted', async () => {
    const grant = await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Item:read' });
    expectStatus(grant, 201);
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    const call = items.Watch({}, metadata(login.body.accessToken, tenant, project));
    const ended = collect(call);
    await new Promise((resolve) => call.once('metadata', resolve));
    const gone = await admin.delete(`/api/projects/${projectId}/capability-grants/${grant.body.data.grantId}`);
    assert.ok(gone.status === 200 || gone.status === 204, String(gone.status));
    const s = await ended;
    assert.equal(s.status.code, grpc.status.PERMISSION_DENIED);
    assert.equal(serviceTrailers(s.status.metadata).reasonCode, 'Realtime.GrantsChanged');
  });
});
