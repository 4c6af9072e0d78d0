/**
 * Schema management over HTTP: every accepted change migrates the branch
 * schema and publishes version + 1; rejected changes leave everything as it was.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

type Project = Awaited<ReturnType<typeof bootstrapProject>>;

const HASH = /^sha256:[0-9a-f]{64}$/;
const newSlug = (): string => `s${randomUUID().slice(0, 8)}`;



/** The live publication version of a project, read through the metadata route. */
async function liveVersion(client: Client): Promise<number> {
  const r = await client.get('/api/Schema/entities/metadata');
  expectStatus(r, 200);
  return r.body.data.publicationVersion;
}

const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'] },
  ],
};
const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
  ],
};

forEachBackend('schema routes', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  const project = (): Promise<Project> => bootstrapProject(server.url, server.adminToken, newSlug());

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  it('each accepted change publishes exactly the next publication version', async () => {
    const { client } = await project();
    assert.equal(await liveVersion(client), 0);
    const r1 = await client.post('/api/Schema/entities', CUSTOMER);
    expectStatus(r1, 201);
    assert.equal(r1.body.surface, 'Schema');
    assert.equal(r1.body.state, 'created');
    assert.equal(r1.body.correlationId, r1.headers.get('x-service-correlation-id'));
    assert.equal(r1.body.data.entityName, 'Customer');
    assert.equal(r1.body.data.collection, 'customers');
    assert.equal(r1.body.data.publicationVersion, 1);
    assert.match(r1.body.data.descriptorHash, HASH);
    assert.match(r1.body.data.journalId, /^[0-9a-f-]{36}$/);
    assert.ok(r1.body.data.statements.some((s: string) => s.startsWith('CREATE TABLE')));

    const r2 = await client.post('/api/Schema/entities', ORDER);
    expectStatus(r2, 201);
    assert.equal(r2.body.data.publicationVersion, 2);
    assert.match(r2.body.data.descriptorHash, HASH);
    assert.notEqual(r2.body.data.descriptorHash, r1.body.data.descriptorHash);

    const r3 = await client.put('/api/Schema/entities', { ...ORDER, fields: [...ORDER.fields, { name: 'note', type: 'String', nullable: true }] });
    expectStatus(r3, 200);
    assert.equal(r3.body.state, 'altered');
    assert.equal(r3.body.data.publicationVersion, 3);
    assert.equal(await liveVersion(client), 3);
  });

  it('the entity table enforces UNIQUE, enum CHECK, NOT NULL and foreign keys', async () => {
    const { client } = await project();
    await defineEntity(client, CUSTOMER);
    await defineEntity(client, ORDER);
    const c = await client.post('/api/customers', { email: 'a@example.com', tier: 'free' });
    expectStatus(c, 201);
    assert.equal(c.body.data.email, 'a@example.com');

    expectError(await client.post('/api/customers', { email: 'a@example.com', tier: 'pro' }), 409, 'CONFLICT', 'CustomerValidation.UniqueViolation', 'email');
    expectError(await client.post('/api/customers', { email: 'b@example.com', tier: 'gold' }), 422, 'VALIDATION_FAILED', 'CustomerValidation.InvalidValue', 'tier');
    expectError(await client.post('/api/customers', { tier: 'pro' }), 422, 'VALIDATION_FAILED', 'CustomerValidation.Required', 'email');
    expectError(await client.post('/api/orders', { total: '1.00', customer: randomUUID() }), 422, 'VALIDATION_FAILED', 'OrderValidation.ReferenceNotFound', 'customer');

    const o = await client.post('/api/orders', { total: '12.50', customer: c.body.data.id });
    expectStatus(o, 201);
    assert.equal(o.body.data.total, '12.50');
    // ON DELETE RESTRICT: the customer cannot go while an order points at it.
    expectError(await client.delete(`/api/customers/${c.body.data.id}`), 409, 'CONFLICT', 'CustomerValidation.ReferencedByOtherRows');
    const list = await client.get('/api/customers');
    expectStatus(list, 200);
    assert.deepEqual(list.body.data.map((x: Json) => x.email), ['a@example.com']);
  });

  it('rejects each kind of invalid definition with 422, the offending field and a Schema reason', async () => {
    const { client } = await project();
    await defineEntity(client, CUSTOMER);
    const cases: Array<[string, unknown, string, string]> = [
      ['unknown type', { entityName: 'Thing', fields: [{ name: 'x', type: 'Text', nullable: false }] }, 'Schema.UnknownFieldType', 'fields[0].type'],
      ['Unspecified type', { entityName: 'Thing', fields: [{ name: 'x', type: 'Unspecified', nullable: false }] }, 'Schema.UnspecifiedKind', 'fields[0].type'],
      ['duplicate field', { entityName: 'Thing', fields: [{ name: 'x', type: 'Int', nullable: false }, { name: 'x', type: 'String', nullable: true }] }, 'Schema.DuplicateField', 'fields[1].name'],
      ['bad entity name', { entityName: 'thing', fields: [] }, 'Schema.InvalidEntityName', 'entityName'],
      ['bad field name', { entityName: 'Thing', fields: [{ name: 'Bad-Name', type: 'Int', nullable: false }] }, 'Schema.InvalidFieldName', 'fields[0].name'],
      ['reserved field name', { entityName: 'Thing', fields: [{ name: 'id', type: 'ID', nullable: false }] }, 'Schema.ReservedFieldName', 'fields[0].name'],
      ['missing reference', { entityName: 'Thing', fields: [{ name: 'owner', type: 'ID', nullable: false, references: 'Ghost' }] }, 'Schema.UnknownReference', 'fields[0].references'],
      ['enum without values', { entityName: 'Thing', fields: [{ name: 'kind', type: 'Enum', nullable: false }] }, 'Schema.InvalidEnumValues', 'fields[0].values'],
      ['empty enum values', { entityName: 'Thing', fields: [{ name: 'kind', type: 'Enum', nullable: false, values: [] }] }, 'Schema.InvalidEnumValues', 'fields[0].values'],
      ['unknown property', { entityName: 'Thing', fields: [], color: 'red' }, 'Schema.UnknownProperty', 'color'],
      ['unknown field property', { entityName: 'Thing', fields: [{ name: 'x', type: 'Int', nullable: false, size: 4 }] }, 'Schema.UnknownProperty', 'fields[0].size'],
    ];
    for (const [what, def, reason, field] of cases) {
      const r = await client.post('/api/Schema/entities', def);
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      const e = errorOf(r);
      assert.equal(e.code, 'VALIDATION_FAILED', what);
      assert.equal(e.reasonCode, reason, what);
      assert.equal(e.field, field, what);
    }
    assert.equal(await liveVersion(client), 1);
    expectStatus(await client.get('/api/things'), 404);
  });

  it('a default the database refuses is 422 Schema.InvalidDefault and publishes nothing', async () => {
    const { client } = await project();
    for (const at of ['2024-02-30T00:00:00Z', '2024-01-01T00:00:00+16:00']) {
      expectError(
        await client.post('/api/Schema/entities', { entityName: 'Slot', fields: [{ name: 'at', type: 'DateTime', nullable: false, default: at }] }),
        422, 'VALIDATION_FAILED', 'Schema.InvalidDefault',
      );
    }
    assert.equal(await liveVersion(client), 0);
    const ok = await client.post('/api/Schema/entities', { entityName: 'Slot', fields: [{ name: 'at', type: 'DateTime', nullable: false, default: '2024-02-29T12:00:00+02:00' }] });
    expectStatus(ok, 201);
    assert.equal(ok.body.data.publicationVersion, 1);
    assert.equal((await client.post('/api/slots', {})).body.data.at, '2024-02-29T10:00:00Z');
  });

  it('concurrent changes each get their own next version', async () => {
    const { client } = await project();
    const replies = await Promise.all([1, 2, 3, 4, 5].map((i) => client.post('/api/Schema/entities', { entityName: `Thing${i}`, fields: [{ name: 'n', type: 'Int', nullable: true }] })));
    for (const r of replies) expectStatus(r, 201);
    assert.deepEqual(replies.map((r) => r.body.data.publicationVersion).sort(), [1, 2, 3, 4, 5]);
    assert.equal(await liveVersion(client), 5);
    const journal = (await client.get('/api/Schema/journal')).body.data as Json[];
    // CONTRACT's entry: { id, publicationVersion, change, state, at }, newest first.
    assert.deepEqual(journal.map((e) => e.publicationVersion), [5, 4, 3, 2, 1]);
  });

  it('creating an entity that exists is 409 and publishes nothing', async () => {
    const { client } = await project();
    await defineEntity(client, CUSTOMER);
    expectError(await client.post('/api/Schema/entities', CUSTOMER), 409, 'CONFLICT', 'Schema.EntityExists', 'entityName');
    assert.equal(await liveVersion(client), 1);
  });

  it('PUT alters the table and new fields are usable at once', async () => {
    const { client } = await project();
    let fields: Json[] = [{ name: 'name', type: 'String', nullable: false }];
    await defineEntity(client, { entityName: 'Product', fields });
    const first = await client.post('/api/products', { name: 'Lamp' });
    expectStatus(first, 201);
    const alter = async (next: Json[], version: number): Promise<void> => {
      fields = next;
      const r = await client.put('/api/Schema/entities', { entityName: 'Product', fields });
      expectStatus(r, 200);
      assert.equal(r.body.data.publicationVersion, version);
      assert.deepEqual(r.body.data.definition.fields.map((f: Json) => f.name), fields.map((f) => f.name));
    };

    // Add a nullable field: existing rows read null, new rows take a value.
    await alter([...fields, { name: 'note', type: 'String', nullable: true }], 2);
    const withNote = await client.post('/api/products', { name: 'Desk', note: 'oak' });
    expectStatus(withNote, 201);
    assert.equal(withNote.body.data.note, 'oak');
    assert.equal((await client.get(`/api/products/${first.body.data.id}`)).body.data.note, null);

    // Add a required field with a default: existing rows get the default.
    await alter([...fields, { name: 'stock', type: 'Int', nullable: false, default: 5 }], 3);
    assert.equal((await client.get(`/api/products/${first.body.data.id}`)).body.data.stock, 5);
    const stocked = await client.post('/api/products', { name: 'Chair', stock: 9 });
    expectStatus(stocked, 201);
    assert.equal(stocked.body.data.stock, 9);

    // Make a field nullable: it may be omitted now.
    await alter(fields.map((f) => (f.name === 'name' ? { ...f, nullable: true } : f)), 4);
    const nameless = await client.post('/api/products', {});
    expectStatus(nameless, 201);
    assert.equal(nameless.body.data.name, null);
    assert.equal(nameless.body.data.stock, 5);

    // Add an enum, then widen its values.
    await alter([...fields, { name: 'size', type: 'Enum', nullable: true, values: ['S', 'M'] }], 5);
    expectError(await client.post('/api/products', { size: 'L' }), 422, 'VALIDATION_FAILED', 'ProductValidation.InvalidValue', 'size');
    await alter(fields.map((f) => (f.name === 'size' ? { ...f, values: ['S', 'M', 'L'] } : f)), 6);
    const large = await client.post('/api/products', { size: 'L' });
    expectStatus(large, 201);
    assert.equal(large.body.data.size, 'L');

    // Make a field unique: duplicates are 409 from then on.
    await alter(fields.map((f) => (f.name === 'note' ? { ...f, unique: true } : f)), 7);
    expectError(await client.post('/api/products', { note: 'oak' }), 409, 'CONFLICT', 'ProductValidation.UniqueViolation', 'note');
    expectStatus(await client.post('/api/products', { note: 'pine' }), 201);
    assert.equal(await liveVersion(client), 7);
  });

  it('refuses a type change and a required field existing rows cannot satisfy, keeping the version', async () => {
    const { client } = await project();
    await defineEntity(client, { entityName: 'Gadget', fields: [{ name: 'label', type: 'String', nullable: false }] });
    expectError(
      await client.put('/api/Schema/entities', { entityName: 'Gadget', fields: [{ name: 'label', type: 'Int', nullable: false }] }),
      422, 'VALIDATION_FAILED', 'Schema.TypeChangeUnsupported', 'label',
    );
    assert.equal(await liveVersion(client), 1);

    // An empty table takes a NOT NULL field without default…
    const onEmpty = await client.put('/api/Schema/entities', { entityName: 'Gadget', fields: [{ name: 'label', type: 'String', nullable: false }, { name: 'weight', type: 'Int', nullable: false }] });
    expectStatus(onEmpty, 200);
    assert.equal(onEmpty.body.data.publicationVersion, 2);
    const row = await client.post('/api/gadgets', { label: 'g', weight: 3 });
    expectStatus(row, 201);
    // …a non-empty one does not, and nothing is published.
    expectError(
      await client.put('/api/Schema/entities', {
        entityName: 'Gadget',
        fields: [{ name: 'label', type: 'String', nullable: false }, { name: 'weight', type: 'Int', nullable: false }, { name: 'colour', type: 'String', nullable: false }],
      }),
      422, 'VALIDATION_FAILED', 'Schema.ExistingRowsViolate',
    );
    assert.equal(await liveVersion(client), 2);
    const read = await client.get(`/api/gadgets/${row.body.data.id}`);
    expectStatus(read, 200);
    assert.deepEqual(Object.keys(read.body.data).sort(), ['concurrencyToken', 'createdAt', 'id', 'label', 'updatedAt', 'weight']);
    // The rolled-back DDL left the table usable as before.
    expectStatus(await client.post('/api/gadgets', { label: 'h', weight: 1 }), 201);

    // Existing rows also block making a field required, unique, or narrowing an enum they use.
    const base = [{ name: 'label', type: 'String', nullable: false }, { name: 'weight', type: 'Int', nullable: false }];
    const v3 = await client.put('/api/Schema/entities', { entityName: 'Gadget', fields: [...base, { name: 'mode', type: 'Enum', nullable: true, values: ['on', 'off'] }] });
    expectStatus(v3, 200);
    assert.equal(v3.body.data.publicationVersion, 3);
    expectStatus(await client.post('/api/gadgets', { label: 'h', weight: 2, mode: 'off' }), 201);
    const attempts: Json[][] = [
      [...base, { name: 'mode', type: 'Enum', nullable: false, values: ['on', 'off'] }],
      [{ ...base[0]!, unique: true }, base[1]!, { name: 'mode', type: 'Enum', nullable: true, values: ['on', 'off'] }],
      [...base, { name: 'mode', type: 'Enum', nullable: true, values: ['on'] }],
    ];
    for (const fields of attempts) {
      expectError(await client.put('/api/Schema/entities', { entityName: 'Gadget', fields }), 422, 'VALIDATION_FAILED', 'Schema.ExistingRowsViolate');
    }
    assert.equal(await liveVersion(client), 3);
    const rows = await client.get('/api/gadgets?sort=weight');
    assert.deepEqual(rows.body.data.map((g: Json) => [g.label, g.weight, g.mode]), [['h', 1, null], ['h', 2, 'off'], ['g', 3, null]]);
  });

  it('DELETE removes an entity and its routes; a referenced entity cannot be deleted', async () => {
    const { client } = await project();
    await defineEntity(client, CUSTOMER);
    await defineEntity(client, ORDER);
    await defineEntity(client, { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: false }] });
    expectStatus(await client.post('/api/notes', { text: 'hi' }), 201);

    expectError(await client.delete('/api/Schema/entities?entityName=Customer'), 409, 'CONFLICT', 'Schema.EntityReferenced', 'entityName');
    assert.equal(await liveVersion(client), 3);

    const del = await client.delete('/api/Schema/entities?entityName=Note');
    expectStatus(del, 200);
    assert.equal(del.body.state, 'deleted');
    assert.equal(del.body.data.entityName, 'Note');
    assert.equal(del.body.data.publicationVersion, 4);
    assert.deepEqual(del.body.data.statements.length, 1);
    assert.match(del.body.data.statements[0], /^DROP TABLE /);
    expectError(await client.get('/api/notes'), 404, 'NOT_FOUND', 'Route.Unknown');
    expectError(await client.delete('/api/Schema/entities?entityName=Note'), 404, 'NOT_FOUND', 'Schema.EntityNotFound');

    // The body form (POST entities/delete) removes the dependent first, then the referenced entity can go.
    const delOrder = await client.post('/api/Schema/entities/delete', { entityName: 'Order' });
    expectStatus(delOrder, 200);
    assert.equal(delOrder.body.data.publicationVersion, 5);
    expectStatus(await client.delete('/api/Schema/entities?entityName=Customer'), 200);
    assert.equal(await liveVersion(client), 6);
    const meta = await client.get('/api/Schema/entities/metadata');
    assert.deepEqual(meta.body.data.entities, []);
    // The name is free again.
    const again = await client.post('/api/Schema/entities', CUSTOMER);
    expectStatus(again, 201);
    assert.equal(again.body.data.publicationVersion, 7);
  });

  it('preview shows the statements without changing anything', async () => {
    const { client } = await project();
    await defineEntity(client, CUSTOMER);
    const create = await client.post('/api/Schema/entities/preview', { entityName: 'Widget', fields: [{ name: 'size', type: 'Int', nullable: false }] });
    expectStatus(create, 200);
    assert.equal(create.body.surface, 'Schema');
    assert.equal(create.body.state, 'previewed');
    assert.equal(create.body.data.action, 'create');
    assert.equal(create.body.data.entityName, 'Widget');
    // CONTRACT: { action, entityName, changes: [ { op, field } ], fromVersion, toVersion }, no SQL.
    assert.deepEqual(create.body.data, { action: 'create', entityName: 'Widget', changes: [{ op: 'addField', field: 'size' }], fromVersion: 1, toVersion: 2 });

    const alter = await client.post('/api/Schema/entities/preview', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] });
    expectStatus(alter, 200);
    assert.equal(alter.body.data.action, 'alter');
    assert.deepEqual(alter.body.data.changes, [{ op: 'addField', field: 'phone' }]);
    assert.doesNotMatch(JSON.stringify(alter.body.data), /ALTER|CREATE/);

    expectError(await client.post('/api/Schema/entities/preview', { entityName: 'Widget', fields: [{ name: 'x', type: 'Nope', nullable: false }] }), 422, 'VALIDATION_FAILED', 'Schema.UnknownFieldType', 'fields[0].type');

    assert.equal(await liveVersion(client), 1);
    expectError(await client.get('/api/widgets'), 404, 'NOT_FOUND', 'Route.Unknown');
    expectError(await client.post('/api/customers', { email: 'x@example.com', tier: 'free', phone: '1' }), 422, 'VALIDATION_FAILED', 'CustomerValidation.UnknownField', 'phone');
  });

  it('validate answers { valid, errors } with 200 for good and bad definitions', async () => {
    const { client } = await project();
    const good = await client.post('/api/Schema/entities/validate', CUSTOMER);
    expectStatus(good, 200);
    assert.equal(good.body.state, 'valid');
    assert.deepEqual(good.body.data, { valid: true, errors: [] });

    const bad = await client.post('/api/Schema/entities/validate', { entityName: 'lower', fields: [{ name: 'id', type: 'Unspecified', nullable: false }] });
    expectStatus(bad, 200);
    assert.equal(bad.body.state, 'invalid');
    assert.equal(bad.body.data.valid, false);
    assert.deepEqual(bad.body.data.errors.map((e: Json) => [e.field, e.reasonCode]), [
      ['entityName', 'Schema.InvalidEntityName'],
      ['fields[0].name', 'Schema.ReservedFieldName'],
      ['fields[0].type', 'Schema.UnspecifiedKind'],
    ]);
    for (const e of bad.body.data.errors) assert.equal(typeof e.message, 'string');
    // Validation publishes nothing.
    assert.equal(await liveVersion(client), 0);
  });

  it('metadata lists operations and exposure bindings with deterministic hashes', async () => {
    const p = await project();
    const { client } = p;
    await defineEntity(client, CUSTOMER);
    await defineEntity(client, ORDER);
    const read = async (): Promise<Json> => {
      const r = await client.get('/api/Schema/entities/metadata');
      expectStatus(r, 200);
      assert.equal(r.body.surface, 'Schema');
      return r.body.data;
    };
    const m1 = await read();
    assert.equal(m1.publicationVersion, 2);
    assert.match(m1.descriptorHash, HASH);
    assert.deepEqual(m1.entities.map((e: Json) => e.entityName), ['Customer', 'Order']);
    const order = m1.entities.find((e: Json) => e.entityName === 'Order');
    assert.equal(order.collection, 'orders');
    assert.deepEqual(order.operations.map((o: Json) => o.operationId), [
      'Entity.Order.List', 'Entity.Order.Create', 'Entity.Order.Count', 'Entity.Order.BatchCreate', 'Entity.Order.BatchUpdate',
      'Entity.Order.BatchDelete', 'Entity.Order.Read', 'Entity.Order.Update', 'Entity.Order.Replace', 'Entity.Order.Delete',
      'Entity.Order.RelationList.customer', 'Entity.Order.RelationAttach.customer', 'Entity.Order.RelationDetach.customer',
    ]);
    const customer = m1.entities.find((e: Json) => e.entityName === 'Customer');
    assert.ok(customer.operations.some((o: Json) => o.operationId === 'Entity.Customer.RelationList.orders'));

    const restBindings = order.bindings.filter((b: Json) => b.protocolKind === 'Rest');
    assert.deepEqual(restBindings.map((b: Json) => b.bindingId), order.operations.map((o: Json) => `rest:${o.operationId}`));
    const byId = new Map<string, Json>(restBindings.map((b: Json) => [b.capabilityId, b]));
    const readBinding = byId.get('Entity.Order.Read')!;
    assert.equal(readBinding.tenantId, p.tenantId);
    assert.equal(readBinding.projectId, p.projectId);
    assert.equal(readBinding.publicationVersion, 2);
    assert.equal(readBinding.protocolKind, 'Rest');
    assert.equal(readBinding.exposureShape, 'RestRoute');
    assert.equal(readBinding.routeOrName, 'GET /orders/{id}');
    assert.equal(readBinding.stability, 'Stable');
    assert.equal(readBinding.deprecationPolicy, null);
    assert.deepEqual(readBinding.requiredGrantSet, ['entity:Order:read']);
    assert.deepEqual(byId.get('Entity.Order.Create')!.requiredGrantSet, ['entity:Order:insert']);
    assert.deepEqual(byId.get('Entity.Order.Update')!.requiredGrantSet, ['entity:Order:update']);
    assert.deepEqual(byId.get('Entity.Order.Delete')!.requiredGrantSet, ['entity:Order:delete']);
    assert.deepEqual(byId.get('Entity.Order.RelationList.customer')!.requiredGrantSet, ['entity:Order:read', 'entity:Customer:read']);
    assert.equal(byId.get('Entity.Order.Create')!.idempotencyPolicyRef, 'idempotency-key:24h');
    assert.equal(readBinding.idempotencyPolicyRef, null);
    // GraphQL projects List, Read, Create, Update and Delete as root fields, and the realtime capability as a subscription.
    const graphqlBindings = order.bindings.filter((b: Json) => b.protocolKind === 'GraphQL');
    assert.deepEqual(graphqlBindings.map((b: Json) => [b.bindingId, b.exposureShape, b.routeOrName]), [
      ['graphql:Entity.Order.List', 'GraphQLField', 'Query.orders'],
      ['graphql:Entity.Order.Create', 'GraphQLMutation', 'Mutation.createOrder'],
      ['graphql:Entity.Order.Read', 'GraphQLField', 'Query.order'],
      ['graphql:Entity.Order.Update', 'GraphQLMutation', 'Mutation.updateOrder'],
      ['graphql:Entity.Order.Delete', 'GraphQLMutation', 'Mutation.deleteOrder'],
      ['graphql:Entity.Order.Subscribe', 'GraphQLSubscription', 'Subscription.orderChanged'],
    ]);
    for (const b of graphqlBindings) {
      assert.equal(b.surfaceName, 'graphql');
      const twin = byId.get(b.capabilityId);
      // The same authority as the REST twin (the subscription needs what a read needs).
      assert.deepEqual(b.requiredGrantSet, twin?.requiredGrantSet ?? ['entity:Order:read']);
    }
    assert.equal(graphqlBindings[1].idempotencyPolicyRef, 'idempotency-key:24h');
    for (const b of order.bindings) assert.match(b.descriptorHash, HASH);
    assert.equal(new Set(order.bindings.map((b: Json) => b.descriptorHash)).size, order.bindings.length);

    // Determinism: the same publication yields the same descriptors.
    const m2 = await read();
    assert.deepEqual(m2, m1);
    const one = await client.get('/api/Schema/entities/metadata/Order');
    expectStatus(one, 200);
    assert.equal(one.body.data.publicationVersion, 2);
    assert.deepEqual(one.body.data.bindings, order.bindings);
    assert.deepEqual(one.body.data.operations, order.operations);
    expectError(await client.get('/api/Schema/entities/metadata/Ghost'), 404, 'NOT_FOUND', 'Schema.EntityNotFound');

    // A new publication (even one that changes another entity) gives new descriptors.
    await client.put('/api/Schema/entities', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] });
    const m3 = await read();
    assert.equal(m3.publicationVersion, 3);
    assert.notEqual(m3.descriptorHash, m1.descriptorHash);
    const order3 = m3.entities.find((e: Json) => e.entityName === 'Order');
    assert.deepEqual(order3.bindings.map((b: Json) => b.bindingId), order.bindings.map((b: Json) => b.bindingId));
    order3.bindings.forEach((b: Json, i: number) => {
      assert.equal(b.publicationVersion, 3);
      assert.notEqual(b.descriptorHash, order.bindings[i].descriptorHash);
    });

    // The publication hash covers the model only: another project with the same schema has the same one;
    // binding descriptors name their tenant and project, so theirs differ.
    const twin = await project();
    await defineEntity(twin.client, CUSTOMER);
    await defineEntity(twin.client, ORDER);
    const t = (await twin.client.get('/api/Schema/entities/metadata')).body.data;
    assert.equal(t.publicationVersion, 2);
    assert.equal(t.descriptorHash, m1.descriptorHash);
    const twinRead = t.entities.find((e: Json) => e.entityName === 'Order').bindings.find((b: Json) => b.capabilityId === 'Entity.Order.Read');
    assert.equal(twinRead.projectId, twin.projectId);
    assert.notEqual(twinRead.descriptorHash, readBinding.descriptorHash);
  });

  it('diff lists added, removed and changed entities between two versions', async () => {
    const { client } = await project();
    await defineEntity(client, CUSTOMER); // 1
    await defineEntity(client, ORDER); // 2
    await client.put('/api/Schema/entities', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] }); // 3
    await defineEntity(client, { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: false }] }); // 4
    expectStatus(await client.delete('/api/Schema/entities?entityName=Order'), 200); // 5

    const d = await client.get('/api/Schema/diff?from=2&to=5');
    expectStatus(d, 200);
    assert.equal(d.body.state, 'diffed');
    assert.deepEqual(d.body.data, { from: 2, to: 5, added: ['Tag'], removed: ['Order'], changed: ['Customer'] });

    const fromZero = await client.get('/api/Schema/diff?from=0&to=2');
    assert.deepEqual(fromZero.body.data, { from: 0, to: 2, added: ['Customer', 'Order'], removed: [], changed: [] });

    const latest = await client.get('/api/Schema/diff');
    assert.deepEqual(latest.body.data, { from: 4, to: 5, added: [], removed: ['Order'], changed: [] });

    expectError(await client.get('/api/Schema/diff?from=1&to=99'), 404, 'NOT_FOUND', 'Schema.PublicationNotFound');
    // CONTRACT: anything but digits is a branch name; an unknown branch is 404.
    expectError(await client.get('/api/Schema/diff?from=x&to=2'), 404, 'NOT_FOUND', 'Schema.BranchNotFound');
    assert.deepEqual((await client.get('/api/Schema/diff?from=2&to=main')).body.data, { from: 2, to: 'main', added: ['Tag'], removed: ['Order'], changed: ['Customer'] });
  });

  it('journal lists applied changes newest first and reads one entry', async () => {
    const { client } = await project();
    const corr = `schema-test-${randomUUID()}`;
    const c1 = await client.post('/api/Schema/entities', CUSTOMER, { 'x-service-correlation-id': corr });
    expectStatus(c1, 201);
    const c2 = await client.put('/api/Schema/entities', { ...CUSTOMER, fields: [...CUSTOMER.fields, { name: 'phone', type: 'String', nullable: true }] });
    const c3 = await client.delete('/api/Schema/entities?entityName=Customer');
    expectStatus(c3, 200);
    // A rejected change leaves no journal entry.
    expectStatus(await client.post('/api/Schema/entities', { entityName: 'Bad', fields: [{ name: 'x', type: 'Nope', nullable: false }] }), 422);

    const j = await client.get('/api/Schema/journal');
    expectStatus(j, 200);
    assert.equal(j.body.surface, 'SchemaJournal');
    assert.equal(j.body.state, 'listed');
    const entries = j.body.data as Json[];
    // CONTRACT's entry: { id, publicationVersion, change, state, at }.
    for (const e of entries) {
      assert.deepEqual(Object.keys(e).sort(), ['at', 'change', 'id', 'publicationVersion', 'state']);
      assert.match(e.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    assert.deepEqual(entries.map((e) => [e.change.action, e.change.entityName, e.publicationVersion, e.state]), [
      ['delete', 'Customer', 3, 'applied'],
      ['alter', 'Customer', 2, 'applied'],
      ['create', 'Customer', 1, 'applied'],
    ]);
    assert.deepEqual(entries.map((e) => e.id), [c3.body.data.journalId, c2.body.data.journalId, c1.body.data.journalId]);
    assert.equal(entries[0]!.change.definition, undefined);
    assert.equal(entries[1]!.change.definition.fields.length, 3);
    void corr;

    const one = await client.get(`/api/Schema/journal/${c1.body.data.journalId}`);
    expectStatus(one, 200);
    assert.equal(one.body.state, 'read');
    assert.deepEqual(one.body.data, entries[2]);
    expectError(await client.get(`/api/Schema/journal/${randomUUID()}`), 404, 'NOT_FOUND', 'Schema.JournalEntryNotFound');
    expectError(await client.get('/api/Schema/journal/not-an-id'), 404, 'NOT_FOUND', 'Schema.JournalEntryNotFound');
  });

  it('schema routes need the admin credential and the scope headers', async () => {
    const p = await project();
    await defineEntity(p.client, CUSTOMER);
    const anonymous = p.client.with({ token: null });
    expectError(await anonymous.post('/api/Schema/entities', ORDER), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    expectError(await anonymous.get('/api/Schema/entities/metadata'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    expectError(await p.client.with({ token: 'not-a-token' }).get('/api/Schema/journal'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');

    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    expectStatus(await anonymous.post('/api/identity/register', { email, password: 'correct horse 42' }), 201);
    const login = await anonymous.post('/api/identity/login', { email, password: 'correct horse 42' });
    expectStatus(login, 200);
    const user = p.client.with({ token: login.body.accessToken });
    expectError(await user.post('/api/Schema/entities', ORDER), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.put('/api/Schema/entities', CUSTOMER), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.delete('/api/Schema/entities?entityName=Customer'), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.get('/api/Schema/entities/metadata'), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    assert.equal(await liveVersion(p.client), 1);

    expectError(await admin.with({ project: p.project }).post('/api/Schema/entities', ORDER), 422, 'VALIDATION_FAILED', 'Scope.TenantHeaderMissing', 'X-Service-Tenant');
    expectError(await admin.with({ tenant: p.tenant }).post('/api/Schema/entities', ORDER), 422, 'VALIDATION_FAILED', 'Scope.ProjectHeaderMissing', 'X-Service-Project');
    expectError(await admin.with({ tenant: 'no-such-tenant', project: p.project }).get('/api/Schema/journal'), 404, 'NOT_FOUND', 'Scope.TenantNotFound');
    expectError(await admin.with({ tenant: p.tenant, project: 'nope' }).get('/api/Schema/journal'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    assert.equal(await liveVersion(p.client), 1);
  });
});
