/**
 * gRPC across publications and the node's life (CONTRACT: gRPC): field
 * numbers stay stable when a publication adds and removes fields (removed
 * ones `reserved`), a new entity is callable without a restart, and a
 * stopping node ends its streams with a status.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, fetchProto, loadProto, metadata, serviceTrailers, unary } from './support.js';

const numberOf = (text: string, message: string, field: string): number | null => {
  const body = new RegExp(`message ${message} \\{([^}]*)\\}`).exec(text)?.[1] ?? '';
  const m = new RegExp(`\\s${field} = (\\d+);`).exec(body);
  return m === null ? null : Number(m[1]);
};

const reservedOf = (text: string, message: string): string[] => {
  const body = new RegExp(`message ${message} \\{([^}]*)\\}`).exec(text)?.[1] ?? '';
  return [...body.matchAll(/reserved ([^;]+);/g)].map((m) => m[1]!);
};

forEachBackend('gRPC across publications and shutdown', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let project: string;
  const clients: any[] = [];

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ tenant, project } = p);
    admin = p.client;
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  it('a field keeps its number across publications; a removed one is reserved and its number never reused', async () => {
    await defineEntity(admin, { entityName: 'Ticket', fields: [{ name: 'title', type: 'String', nullable: false }, { name: 'priority', type: 'Int', nullable: true }] });
    const v1 = await fetchProto(admin);
    const title = numberOf(v1, 'Ticket', 'title');
    const priority = numberOf(v1, 'Ticket', 'priority');
    assert.ok(title !== null && priority !== null && title !== priority);
    assert.equal(numberOf(v1, 'TicketInput', 'priority'), priority, 'the input uses the row message\'s numbers');
    // Remove priority, add dueAt.
    expectStatus(await admin.put('/api/Schema/entities', { entityName: 'Ticket', fields: [{ name: 'title', type: 'String', nullable: false }, { name: 'dueAt', type: 'DateTime', nullable: true }] }), 200);
    const v2 = await fetchProto(admin);
    assert.equal(numberOf(v2, 'Ticket', 'title'), title, 'title keeps its number');
    assert.equal(numberOf(v2, 'Ticket', 'priority'), null);
    const due = numberOf(v2, 'Ticket', 'due_at');
    assert.ok(due !== null && due !== priority && due !== title, `due_at got a fresh number (${due})`);
    assert.deepEqual(reservedOf(v2, 'Ticket'), [String(priority), '"priority"']);
    // priority comes back with its type: numbers are keyed by name and proto type, so it takes its number back (wire-compatible).
    expectStatus(await admin.put('/api/Schema/entities', { entityName: 'Ticket', fields: [{ name: 'title', type: 'String', nullable: false }, { name: 'dueAt', type: 'DateTime', nullable: true }, { name: 'priority', type: 'Int', nullable: true }] }), 200);
    const v3 = await fetchProto(admin);
    assert.equal(numberOf(v3, 'Ticket', 'due_at'), due);
    assert.equal(numberOf(v3, 'Ticket', 'priority'), priority, 'same name and type: its number again');
    // The served file loads, and a client of the old file still reads the fields it knows.
    const oldClient = clientOf(loadProto(v1), 'TicketService', server.node.grpcPort);
    const newClient = clientOf(loadProto(v3), 'TicketService', server.node.grpcPort);
    clients.push(oldClient, newClient);
    const md = metadata(server.adminToken, tenant, project);
    const created = await unary(newClient, 'Create', { ticket: { title: 'new', due_at: { seconds: 1_800_000_000, nanos: 0 }, priority: 2 } }, md);
    assert.equal(created.error, null, created.error?.message);
    const seenOld = await unary(oldClient, 'Get', { id: created.value.id }, md);
    assert.equal(seenOld.value.title, 'new');
    assert.equal(seenOld.value.priority, 2);
  });

  it('a new entity is callable at once, without a restart, through the same channel', async () => {
    const md = metadata(server.adminToken, tenant, project);
    await defineEntity(admin, { entityName: 'Widget', fields: [{ name: 'name', type: 'String', nullable: false }] });
    const widgets = clientOf(loadProto(await fetchProto(admin)), 'WidgetService', server.node.grpcPort);
    clients.push(widgets);
    const made = await unary(widgets, 'Create', { widget: { name: 'w1' } }, md);
    assert.equal(made.error, null, made.error?.message);
    const listed = await unary(widgets, 'List', {}, md);
    assert.deepEqual(listed.value.items.map((x: any) => x.name), ['w1']);
    // Deleted again: the method answers UNIMPLEMENTED for this project.
    expectStatus(await admin.delete('/api/Schema/entities', { entityName: 'Widget' }), 200);
    const gone = await unary(widgets, 'List', {}, md);
    assert.equal(gone.error?.code, grpc.status.UNIMPLEMENTED);
  });

  it('stopping the node ends a Watch with UNAVAILABLE and its trailers, and the stop completes', async () => {
    const pkg = loadProto(await fetchProto(admin));
    const tickets = clientOf(pkg, 'TicketService', server.node.grpcPort);
    clients.push(tickets);
    const call = tickets.Watch({}, metadata(server.adminToken, tenant, project));
    call.on('data', () => {});
    call.on('error', () => {});
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    await new Promise((resolve) => call.once('metadata', resolve));
    const t0 = Date.now();
    await server.stop();
    const s = await status;
    assert.equal(s.code, grpc.status.UNAVAILABLE);
    assert.deepEqual([serviceTrailers(s.metadata).code, serviceTrailers(s.metadata).reasonCode], ['UNAVAILABLE', 'Node.Draining']);
    assert.ok(Date.now() - t0 < 8_000, 'the stop does not wait for the stream');
  });
});
