/**
 * Names that collide or cannot be used are refused when the entity is
 * defined (422 with the offending path), instead of leaving a collection,
 * a relation or a filter key unreachable.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STATIC_ROUTES } from '../../adapters/rest/routes.js';
import { collectionName } from '../../runtime/publication/naming.js';
import type { EntityDef } from '../../runtime/publication/model.js';
import { parseEntityDefinition } from '../../runtime/publication/validate-definition.js';
import { RESERVED_COLLECTIONS } from '../../runtime/publication/validate-names.js';
import { bootstrapProject, defineEntity, errorOf, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';

describe('reserved collection names', () => {
  it('cover the first segment of every fixed route a collection name could spell', () => {
    for (const r of STATIC_ROUTES) {
      const head = r.path.split('/')[0]!;
      // Collection names are lower camel case (naming.ts); capitalised heads (`Schema`, `TenantRecord`) cannot collide.
      if (/^[a-z]/.test(head)) assert.ok(RESERVED_COLLECTIONS.has(head), `fixed route /api/${r.path} starts with '${head}', which is not reserved`);
    }
  });

  it('do not lock entities a model already held before the rules: their alters still validate', () => {
    const field = (name: string, references: string | null = null): EntityDef['fields'][number] => ({ name, type: references === null ? 'String' : 'ID', nullable: true, unique: false, default: null, values: [], references });
    const legacy = { entities: [
      { entityName: 'Bus', fields: [field('plate')], softDelete: false },
      { entityName: 'Buse', fields: [field('in'), field('orders')], softDelete: false },
      { entityName: 'Order', fields: [field('buse', 'Buse')], softDelete: false },
      { entityName: 'String', fields: [], softDelete: false },
    ] };
    const alter = (entityName: string, names: string[], refs: Record<string, string> = {}) => parseEntityDefinition({ entityName, fields: names.map((n) => ({ name: n, type: refs[n] === undefined ? 'String' : 'ID', nullable: true, ...(refs[n] === undefined ? {} : { references: refs[n] }) })) }, legacy).problems;
    assert.deepEqual(alter('Buse', ['in', 'orders', 'extra']), []);
    assert.deepEqual(alter('Order', ['buse', 'note'], { buse: 'Buse' }), []);
    assert.deepEqual(alter('String', ['x']), []);
    // New names are still judged.
    assert.equal(alter('Buse', ['in', 'orders', 'or'])[0]?.reasonCode, 'Schema.ReservedFieldName');
    assert.equal(alter('Busis', [])[0]?.reasonCode, undefined, 'an unrelated new entity is fine');
  });
});

forEachBackend('schema names', (backend) => {
  let server: TestServer;
  let client: Client;

  before(async () => {
    server = await startServer({ backend });
    client = (await bootstrapProject(server.url, server.adminToken)).client;
  });
  after(async () => {
    await server?.close();
  });

  const refused = async (def: unknown, reason: string, field: string, what: string, method: 'post' | 'put' = 'post'): Promise<void> => {
    const r = await client[method]('/api/Schema/entities', def);
    assert.equal(r.status, 422, `${what}: ${r.text.slice(0, 300)}`);
    const e = errorOf(r);
    assert.equal(e.code, 'VALIDATION_FAILED', what);
    assert.equal(e.reasonCode, reason, `${what}: ${e.message}`);
    assert.equal(e.field, field, what);
    // The validate route reports the same problem without applying anything.
    const v = await client.post('/api/Schema/entities/validate', def);
    expectStatus(v, 200);
    assert.equal(v.body.data.valid, false, what);
    assert.ok(v.body.data.errors.some((x: { reasonCode: string; field: string }) => x.reasonCode === reason && x.field === field), `${what}: validate lists it`);
  };

  it('two entities with the same collection name (Bus and Buse → buses): the second is 422 Schema.NameCollision', async () => {
    assert.equal(collectionName('Bus'), collectionName('Buse'));
    await defineEntity(client, { entityName: 'Bus', fields: [{ name: 'plate', type: 'String', nullable: false }] });
    await refused({ entityName: 'Buse', fields: [{ name: 'x', type: 'Int', nullable: true }] }, 'Schema.NameCollision', 'entityName', 'Buse after Bus');
    expectStatus(await client.post('/api/buses', { plate: 'B-1' }), 201);
    // GraphQL root fields: Person's list and People's single row would both be `people`.
    await defineEntity(client, { entityName: 'Person', fields: [] });
    await refused({ entityName: 'People', fields: [] }, 'Schema.NameCollision', 'entityName', 'People after Person');
  });

  it('entity names of platform routes and GraphQL built-in types: 422 Schema.ReservedEntityName', async () => {
    for (const name of ['Event', 'Webhook', 'Project', 'Operation', 'Identity', 'Realtime', 'Audit', 'String', 'ID', 'Boolean', 'DateTime', 'Query']) {
      await refused({ entityName: name, fields: [] }, 'Schema.ReservedEntityName', 'entityName', name);
    }
  });

  it('field names that are filter keywords or generated: 422 Schema.ReservedFieldName; `__` names are not field names', async () => {
    for (const name of ['and', 'or', 'not', 'eq', 'ne', 'gt', 'lt', 'in', 'between', 'like', 'isNull', 'id', 'createdAt', 'updatedAt', 'concurrencyToken', 'deletedAt']) {
      await refused({ entityName: 'Gadget', fields: [{ name: 'ok', type: 'Int', nullable: true }, { name, type: 'String', nullable: true }] }, 'Schema.ReservedFieldName', 'fields[1].name', `field ${name}`);
    }
    await refused({ entityName: 'Gadget', fields: [{ name: '__typename', type: 'String', nullable: true }] }, 'Schema.InvalidFieldName', 'fields[0].name', 'field __typename');
  });

  it('a toMany relation named like a field of its target is 422 Schema.NameCollision, from either side', async () => {
    // Order.customer → Customer gets the relation `orders`, which Customer's own field already names.
    await defineEntity(client, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }, { name: 'orders', type: 'Int', nullable: true }] });
    await refused(
      { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: true }, { name: 'customer', type: 'ID', nullable: true, references: 'Customer' }] },
      'Schema.NameCollision', 'fields[1].references', 'Order referencing Customer(orders)',
    );
    // The other way round: Invoice.account → Account exists; Account may not add a field `invoices`.
    await defineEntity(client, { entityName: 'Account', fields: [{ name: 'name', type: 'String', nullable: false }] });
    await defineEntity(client, { entityName: 'Invoice', fields: [{ name: 'account', type: 'ID', nullable: true, references: 'Account' }] });
    await refused(
      { entityName: 'Account', fields: [{ name: 'name', type: 'String', nullable: false }, { name: 'invoices', type: 'Int', nullable: true }] },
      'Schema.NameCollision', 'fields[1].name', 'Account adding a field invoices', 'put',
    );
    // Without the collision both sides work, and the relation route answers.
    const a = await client.post('/api/accounts', { name: 'a' });
    expectStatus(a, 201);
    expectStatus(await client.post('/api/invoices', { account: a.body.data.id }), 201);
    const rel = await client.get(`/api/accounts/${a.body.data.id}/invoices`);
    expectStatus(rel, 200);
    assert.equal(rel.body.data.length, 1);
  });
});
