/**
 * gRPC response metadata, with the stock grpc-js client: every call that
 * reached dispatch names the publication that served it in
 * `x-service-publication-version` (initial metadata; error trailers too),
 * equal to REST's `X-Service-Publication-Version` for the same project and
 * branch (a deployment pin, a branch header); a Deprecated GrpcMethod binding
 * answers REST's `deprecation`, `sunset` and `link`; each method's binding
 * retires on its own (StreamList is not List).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData } from '../control/support.js';
import { clientOf, fetchProto, loadProto, metadata, serviceTrailers } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false, unique: true }] };
const VERSION = 'x-service-publication-version';
const MISSING = '00000000-0000-4000-8000-000000000000';

type Md = Record<string, string>;
const plain = (md: grpc.Metadata | null): Md => Object.fromEntries(Object.entries(md?.getMap() ?? {}).map(([k, v]) => [k, String(v)]));

/** A unary call's initial metadata, value or error, and trailers. */
function unaryWithHeaders(service: any, method: string, request: unknown, md: grpc.Metadata): Promise<{ headers: Md; error: grpc.ServiceError | null; value: any; trailers: Md }> {
  return new Promise((resolve) => {
    let headers: Md = {};
    let trailers: Md = {};
    const call = service[method](request, md, (error: grpc.ServiceError | null, value: any) => {
      setImmediate(() => resolve({ headers, error, value, trailers: error !== null ? plain(error.metadata) : trailers }));
    });
    call.on('metadata', (m: grpc.Metadata) => {
      headers = plain(m);
    });
    call.on('status', (s: grpc.StatusObject) => {
      trailers = plain(s.metadata);
    });
  });
}

/** A server stream's initial metadata, messages and status. */
function streamWithHeaders(call: grpc.ClientReadableStream<any>, stopAfterHeaders = false): Promise<{ headers: Md; items: any[]; status: grpc.StatusObject }> {
  return new Promise((resolve) => {
    let headers: Md = {};
    const items: any[] = [];
    call.on('metadata', (m: grpc.Metadata) => {
      headers = plain(m);
      if (stopAfterHeaders) call.cancel();
    });
    call.on('data', (m: any) => items.push(m));
    call.on('error', () => {});
    call.on('status', (status: grpc.StatusObject) => setImmediate(() => resolve({ headers, items, status })));
  });
}

forEachBackend('gRPC response metadata', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let md: grpc.Metadata;
  let customers: any;
  let tenant: string;
  let project: string;

  const restVersion = async (c: Client): Promise<string> => {
    const r = await c.get('/api/customers');
    expectStatus(r, 200);
    return r.headers.get('x-service-publication-version')!;
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ tenant, project } = p);
    admin = p.client;
    await defineEntity(admin, CUSTOMER);
    expectStatus(await admin.post('/api/customers', { email: 'a@example.com' }), 201);
    customers = clientOf(loadProto(await fetchProto(admin)), 'CustomerService', server.node.grpcPort);
    md = metadata(server.adminToken, tenant, project);
  });
  after(async () => {
    customers?.close();
    await server.close();
  });

  it('unary, streaming and failed calls name the serving publication, as REST does; none before a scope resolved', async () => {
    const v = await restVersion(admin);
    assert.match(v, /^\d+$/);
    const list = await unaryWithHeaders(customers, 'List', {}, md);
    assert.equal(list.error, null);
    assert.equal(list.headers[VERSION], v);
    assert.ok(list.headers['x-service-correlation-id']);
    const made = await unaryWithHeaders(customers, 'Create', { customer: { email: 'b@example.com' } }, md);
    assert.equal(made.headers[VERSION], v);
    const stream = await streamWithHeaders(customers.StreamList({}, md));
    assert.equal(stream.status.code, grpc.status.OK);
    assert.equal(stream.items.length, 2);
    assert.equal(stream.headers[VERSION], v);
    const empty = await streamWithHeaders(customers.StreamList({ filter: JSON.stringify({ email: { eq: 'none' } }) }, md));
    assert.equal(empty.items.length, 0);
    assert.equal(empty.headers[VERSION], v, 'a stream with no rows still names its publication');
    const watch = await streamWithHeaders(customers.Watch({}, md), true);
    assert.equal(watch.headers[VERSION], v);
    const batch = await new Promise<{ headers: Md; error: unknown }>((resolve) => {
      let headers: Md = {};
      const call = customers.BatchCreate(md, (error: unknown) => setImmediate(() => resolve({ headers, error })));
      call.on('metadata', (m: grpc.Metadata) => {
        headers = plain(m);
      });
      call.write({ email: 'c@example.com' });
      call.end();
    });
    assert.equal(batch.error, null);
    assert.equal(batch.headers[VERSION], v);

    // A refusal after the scope resolved: the trailers name the publication too.
    const missing = await unaryWithHeaders(customers, 'Get', { id: MISSING }, md);
    assert.equal(missing.error?.code, grpc.status.NOT_FOUND);
    assert.equal(missing.trailers[VERSION], v);
    assert.equal(serviceTrailers(missing.error!.metadata).code, 'NOT_FOUND');
    // An entity the project lacks (UNIMPLEMENTED) still went through a publication.
    const other = clientOf(loadProto('syntax = "proto3"; package service.app; message X { string id = 1; } service GhostService { rpc Get(X) returns (X); }'), 'GhostService', server.node.grpcPort);
    const ghost = await unaryWithHeaders(other, 'Get', { id: MISSING }, md);
    other.close();
    assert.equal(ghost.error?.code, grpc.status.UNIMPLEMENTED);
    assert.equal(ghost.trailers[VERSION], v);
    // A bad credential is refused before any publication: no version.
    const anon = await unaryWithHeaders(customers, 'List', {}, metadata('nope', tenant, project));
    assert.equal(anon.error?.code, grpc.status.UNAUTHENTICATED);
    assert.equal(anon.trailers[VERSION], undefined);
  });

  it('follows what serves traffic: a schema change, a branch header, a deployment pin', async () => {
    const before = await restVersion(admin);
    await defineEntity(admin, { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: true }] });
    const head = await restVersion(admin);
    assert.notEqual(head, before);
    assert.equal((await unaryWithHeaders(customers, 'List', {}, md)).headers[VERSION], head);

    // A branch with a schema change of its own: the branch header selects its head on both protocols.
    controlData(await admin.post('/api/branches', { name: 'feature' }), 201);
    const feature = admin.with({ branch: 'feature' });
    await defineEntity(feature, { entityName: 'Tag', fields: [{ name: 'name', type: 'String', nullable: true }] });
    const branchVersion = await restVersion(feature);
    assert.notEqual(branchVersion, head);
    const branchMd = metadata(server.adminToken, tenant, project);
    branchMd.set('x-service-branch', 'feature');
    assert.equal((await unaryWithHeaders(customers, 'List', {}, branchMd)).headers[VERSION], branchVersion);

    // Production pinned to the older publication: calls without a branch are served by it, on REST and gRPC alike.
    const d = controlData(await admin.post('/api/deployments', { target: { branch: 'main', publicationVersion: Number(before) } }), 202);
    for (let i = 0; ; i++) {
      if (controlData(await admin.get(`/api/deployments/${d.id}`), 200).state === 'succeeded') break;
      assert.ok(i < 200, 'deployment did not succeed');
      await sleep(50);
    }
    assert.equal(await restVersion(admin), before);
    assert.equal((await unaryWithHeaders(customers, 'List', {}, md)).headers[VERSION], before);
    assert.equal((await streamWithHeaders(customers.StreamList({}, md))).headers[VERSION], before);
    const mainMd = metadata(server.adminToken, tenant, project);
    mainMd.set('x-service-branch', 'main');
    assert.equal((await unaryWithHeaders(customers, 'List', {}, mainMd)).headers[VERSION], head);
  });

  it('a Deprecated method answers deprecation, sunset and link as REST does; each method binding retires on its own', async () => {
    const announce = async (body: Record<string, unknown>): Promise<any> => controlData(await admin.post('/api/version/deprecations/announce', body), 200);
    const dep = { replacement: '/api/v2/customers', sunsetAt: '2031-06-30T12:00:00Z' };
    const grpcRec = await announce({ bindingId: 'grpc:Entity.Customer.List', ...dep });
    await announce({ bindingId: 'rest:Entity.Customer.List', ...dep });
    const rest = await admin.get('/api/customers');
    const got = await unaryWithHeaders(customers, 'List', {}, md);
    assert.equal(got.error, null);
    assert.equal(got.headers.deprecation, `@${Math.floor(Date.parse(grpcRec.announcedAt) / 1000)}`);
    assert.equal(got.headers.sunset, rest.headers.get('sunset'));
    assert.equal(got.headers.link, rest.headers.get('link'));
    assert.equal(got.headers.link, '</api/v2/customers>; rel="successor-version"');
    // Other methods, StreamList included (its own binding), carry none.
    const stream = await streamWithHeaders(customers.StreamList({}, md));
    assert.equal(stream.headers.deprecation, undefined);
    assert.equal((await unaryWithHeaders(customers, 'Get', { id: MISSING }, md)).trailers.deprecation, undefined);

    // Retiring List leaves StreamList serving; retiring StreamList's binding fails it closed.
    await announce({ bindingId: 'grpc:Entity.Customer.List', stability: 'Retired' });
    const retired = await unaryWithHeaders(customers, 'List', {}, md);
    assert.equal(retired.error?.code, grpc.status.NOT_FOUND);
    assert.equal(serviceTrailers(retired.error!.metadata).reasonCode, 'ExposureBinding.Retired');
    assert.equal((await streamWithHeaders(customers.StreamList({}, md))).status.code, grpc.status.OK);
    await announce({ bindingId: 'grpc:Entity.Customer.List.Stream', stability: 'Retired' });
    const streamRetired = await streamWithHeaders(customers.StreamList({}, md));
    assert.equal(streamRetired.status.code, grpc.status.NOT_FOUND);
    assert.equal(String(streamRetired.status.metadata.get('x-service-reason-code')[0]), 'ExposureBinding.Retired');
    await announce({ bindingId: 'grpc:Entity.Customer.Subscribe', stability: 'Retired' });
    const watch = await streamWithHeaders(customers.Watch({}, md));
    assert.equal(watch.status.code, grpc.status.NOT_FOUND);
    assert.equal(String(watch.status.metadata.get('x-service-reason-code')[0]), 'ExposureBinding.Retired');
    const deprecatedStream = await announce({ bindingId: 'grpc:Entity.Customer.List.Stream', ...dep });
    const s2 = await streamWithHeaders(customers.StreamList({}, md));
    assert.equal(s2.status.code, grpc.status.OK);
    assert.equal(s2.headers.deprecation, `@${Math.floor(Date.parse(deprecatedStream.announcedAt) / 1000)}`);
    for (const bindingId of ['grpc:Entity.Customer.List', 'grpc:Entity.Customer.List.Stream', 'grpc:Entity.Customer.Subscribe', 'rest:Entity.Customer.List']) await announce({ bindingId, stability: 'Stable' });
  });
});
