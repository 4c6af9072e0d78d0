/**
 * gRPC server reflection (CONTRACT: gRPC): v1 and v1alpha through a grpc-js
 * client of the reflection proto shipped with @grpc/reflection, answered per
 * project from the call's metadata; a client built from the reflected
 * descriptors alone (as grpcurl and Postman do) can call the services.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { metadata } from './support.js';

const REFLECTION_PROTO_DIR = join(dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '..', 'proto', 'grpc', 'reflection');

function reflectionClient(version: 'v1' | 'v1alpha', port: number): any {
  const def = protoLoader.loadSync(join(REFLECTION_PROTO_DIR, version, 'reflection.proto'), { keepCase: true, longs: String, defaults: false, oneofs: true });
  const pkg: any = grpc.loadPackageDefinition(def);
  return new pkg.grpc.reflection[version].ServerReflection(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** Sends reflection requests on one stream and collects the answers (or the stream's error). */
function reflect(client: any, md: grpc.Metadata, requests: unknown[]): Promise<{ answers: any[]; error: grpc.ServiceError | null }> {
  return new Promise((resolve) => {
    const call = client.ServerReflectionInfo(md);
    const answers: any[] = [];
    let error: grpc.ServiceError | null = null;
    call.on('data', (a: any) => answers.push(a));
    call.on('error', (e: grpc.ServiceError) => {
      error = e;
    });
    call.on('status', () => setImmediate(() => resolve({ answers, error })));
    for (const r of requests) call.write(r);
    call.end();
  });
}

const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'placedAt', type: 'DateTime', nullable: true },
  ],
};

forEachBackend('gRPC server reflection', (backend: Backend) => {
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
    await defineEntity(admin, ORDER);
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }] });
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  for (const version of ['v1', 'v1alpha'] as const) {
    it(`${version}: lists the project's services and answers file_containing_symbol with the file and its imports`, async () => {
      const client = reflectionClient(version, server.node.grpcPort);
      clients.push(client);
      const md = metadata(server.adminToken, tenant, project);
      const { answers, error } = await reflect(client, md, [
        { list_services: '*' },
        { file_containing_symbol: 'service.app.OrderService' },
        { file_containing_symbol: 'service.app.Nope' },
        { file_by_filename: 'google/protobuf/timestamp.proto' },
      ]);
      assert.equal(error, null);
      assert.equal(answers.length, 4);
      const services = answers[0].list_services_response.service.map((s: any) => s.name).sort();
      assert.deepEqual(services, ['service.app.CustomerService', 'service.app.OrderService']);
      const files = answers[1].file_descriptor_response.file_descriptor_proto.map((b: Buffer) => descriptor.FileDescriptorProto.decode(b) as any);
      assert.equal(files[0].name, 'service-app.proto');
      assert.equal(files[0].package, 'service.app');
      assert.deepEqual([...files[0].dependency].sort(), ['google/protobuf/field_mask.proto', 'google/protobuf/struct.proto', 'google/protobuf/timestamp.proto']);
      assert.deepEqual(files.slice(1).map((f: any) => f.name).sort(), [...files[0].dependency].sort(), 'the imports come along');
      const order = files[0].messageType.find((m: any) => m.name === 'Order');
      const placed = order.field.find((f: any) => f.name === 'placed_at');
      assert.equal(placed.typeName, '.google.protobuf.Timestamp');
      assert.equal(placed.proto3Optional, true);
      const svc = files[0].service.find((s: any) => s.name === 'OrderService');
      assert.equal(svc.method.find((m: any) => m.name === 'StreamList').serverStreaming, true);
      assert.equal(svc.method.find((m: any) => m.name === 'BatchCreate').clientStreaming, true);
      assert.equal(answers[2].error_response.error_code, grpc.status.NOT_FOUND);
      assert.equal((descriptor.FileDescriptorProto.decode(answers[3].file_descriptor_response.file_descriptor_proto[0]) as any).name, 'google/protobuf/timestamp.proto');
    });
  }

  it('a client built from the reflected descriptors alone calls the service', async () => {
    const client = reflectionClient('v1', server.node.grpcPort);
    clients.push(client);
    const md = metadata(server.adminToken, tenant, project);
    const { answers } = await reflect(client, md, [{ file_containing_symbol: 'service.app.OrderService' }]);
    const set = { file: answers[0].file_descriptor_response.file_descriptor_proto.map((b: Buffer) => descriptor.FileDescriptorProto.decode(b)) };
    const root = (protobuf.Root as any).fromDescriptor(set) as protobuf.Root;
    const Req = root.lookupType('service.app.GetOrderRequest');
    const Order = root.lookupType('service.app.Order');
    const created = await admin.post('/api/orders', { total: '3.75', placedAt: '2026-03-01T00:00:00.5Z' });
    expectStatus(created, 201);
    const Generic = grpc.makeGenericClientConstructor({
      Get: {
        path: '/service.app.OrderService/Get', requestStream: false, responseStream: false,
        requestSerialize: (v: any) => Buffer.from(Req.encode(Req.fromObject(v)).finish()),
        requestDeserialize: (b: Buffer) => Req.decode(b),
        responseSerialize: (v: any) => Buffer.from(Order.encode(v).finish()),
        responseDeserialize: (b: Buffer) => Order.toObject(Order.decode(b), { longs: String }),
      },
    }, 'OrderService');
    const c: any = new Generic(`127.0.0.1:${server.node.grpcPort}`, grpc.credentials.createInsecure());
    clients.push(c);
    const got: any = await new Promise((resolve, reject) => c.Get({ id: created.body.data.id }, md, (e: any, v: any) => (e ? reject(e) : resolve(v))));
    assert.equal(got.total, '3.75');
    assert.equal(got.placed_at.nanos, 500_000_000);
  });

  it('answers per project, and without a credential is UNAUTHENTICATED', async () => {
    const other = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(other.client, { entityName: 'Invoice', fields: [{ name: 'n', type: 'Int', nullable: false }] });
    const client = reflectionClient('v1alpha', server.node.grpcPort);
    clients.push(client);
    const theirs = await reflect(client, metadata(server.adminToken, other.tenant, other.project), [{ list_services: '*' }]);
    assert.deepEqual(theirs.answers[0].list_services_response.service.map((s: any) => s.name), ['service.app.InvoiceService']);
    const none = await reflect(client, metadata(null, tenant, project), [{ list_services: '*' }]);
    assert.equal(none.error?.code, grpc.status.UNAUTHENTICATED);
    assert.equal(none.answers.length, 0);
  });
});
