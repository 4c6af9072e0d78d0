/**
 * The GraphQL schema compiled per publication (CONTRACT: GraphQL), read back
 * over HTTP from `GET /graphql/schema` and checked with graphql-js itself:
 * the SDL must build into a valid schema whose types are the CONTRACT's.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  buildSchema, getNamedType, GraphQLEnumType, GraphQLInputObjectType, GraphQLObjectType, isNonNullType, printType, type GraphQLSchema,
} from 'graphql';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'], default: 'free' },
  ],
};
const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'placedAt', type: 'DateTime', nullable: true },
    { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] },
    { name: 'meta', type: 'JSON', nullable: true },
    { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
  ],
};

const typeString = (schema: GraphQLSchema, typeName: string, field: string): string => {
  const t = schema.getType(typeName) as GraphQLObjectType | GraphQLInputObjectType;
  const f = t.getFields()[field];
  assert.ok(f, `${typeName}.${field} missing`);
  return String(f.type);
};

forEachBackend('GraphQL schema', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let project: string;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    tenant = p.tenant;
    project = p.project;
    await defineEntity(admin, CUSTOMER);
    await defineEntity(admin, ORDER);
  });
  after(async () => { await server.close(); });

  it('GET /graphql/schema answers the project\'s SDL, which builds into the CONTRACT\'s types', async () => {
    const r = await admin.get('/graphql/schema');
    expectStatus(r, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    const schema = buildSchema(r.text);
    // Root fields: the list is the REST plural, the single row nullable.
    assert.equal(typeString(schema, 'Query', 'orders'), 'OrderConnection!');
    assert.equal(typeString(schema, 'Query', 'order'), 'Order');
    const orders = schema.getQueryType()!.getFields().orders!;
    assert.deepEqual(orders.args.map((a) => `${a.name}: ${String(a.type)}`),
      ['filter: OrderFilter', 'first: Int', 'after: String', 'last: Int', 'before: String', 'sort: [OrderSort!]']);
    assert.equal(typeString(schema, 'OrderConnection', 'edges'), '[OrderEdge!]!');
    assert.equal(typeString(schema, 'OrderConnection', 'pageInfo'), 'PageInfo!');
    assert.equal(typeString(schema, 'OrderConnection', 'totalCount'), 'Int!');
    assert.equal(typeString(schema, 'OrderEdge', 'node'), 'Order!');
    assert.equal(typeString(schema, 'OrderEdge', 'cursor'), 'String!');
    assert.deepEqual(Object.keys((schema.getType('PageInfo') as GraphQLObjectType).getFields()), ['hasNextPage', 'hasPreviousPage', 'startCursor', 'endCursor']);
    // Object fields: required non-null, generated fields, scalars, enums, relations both ways.
    assert.equal(typeString(schema, 'Order', 'id'), 'ID!');
    assert.equal(typeString(schema, 'Order', 'total'), 'Decimal!');
    assert.equal(typeString(schema, 'Order', 'placedAt'), 'DateTime');
    assert.equal(typeString(schema, 'Order', 'status'), 'OrderStatus!');
    assert.equal(typeString(schema, 'Order', 'meta'), 'JSON');
    assert.equal(typeString(schema, 'Order', 'customer'), 'Customer!');
    assert.equal(typeString(schema, 'Order', 'createdAt'), 'DateTime!');
    assert.equal(typeString(schema, 'Order', 'concurrencyToken'), 'String!');
    assert.equal(typeString(schema, 'Customer', 'orders'), 'OrderConnection!');
    const related = (schema.getType('Customer') as GraphQLObjectType).getFields().orders!;
    assert.deepEqual(related.args.map((a) => a.name), ['filter', 'first', 'after', 'last', 'before', 'sort']);
    assert.deepEqual((schema.getType('OrderStatus') as GraphQLEnumType).getValues().map((v) => v.name), ['PENDING', 'PAID']);
    // Sorting: every sortable field in UPPER_SNAKE_CASE (JSON is not sortable), direction defaulting to ASC.
    const sortFields = (schema.getType('OrderSortField') as GraphQLEnumType).getValues().map((v) => v.name);
    for (const v of ['ID', 'TOTAL', 'PLACED_AT', 'STATUS', 'CUSTOMER', 'CREATED_AT', 'UPDATED_AT']) assert.ok(sortFields.includes(v), `${v} in ${sortFields.join(',')}`);
    assert.ok(!sortFields.includes('META'));
    assert.match(printType(schema.getType('OrderSort')!), /field: OrderSortField!\s+direction: SortDirection = ASC/);
    assert.deepEqual((schema.getType('SortDirection') as GraphQLEnumType).getValues().map((v) => v.name), ['ASC', 'DESC']);
    // Filters: operators per type, a reference takes the related entity's filter, and/or/not.
    assert.equal(typeString(schema, 'OrderFilter', 'customer'), 'CustomerFilter');
    assert.equal(typeString(schema, 'OrderFilter', 'status'), 'OrderStatusFilter');
    assert.equal(typeString(schema, 'OrderFilter', 'and'), '[OrderFilter!]');
    assert.equal(typeString(schema, 'OrderFilter', 'not'), 'OrderFilter');
    assert.deepEqual(Object.keys((schema.getType('StringFilter') as GraphQLInputObjectType).getFields()).sort(), ['between', 'eq', 'gt', 'in', 'isNull', 'like', 'lt', 'ne']);
    assert.equal(typeString(schema, 'DecimalFilter', 'in'), '[Decimal!]');
    assert.ok(!('like' in (schema.getType('DecimalFilter') as GraphQLInputObjectType).getFields()));
    // Mutations and subscriptions.
    assert.equal(typeString(schema, 'Mutation', 'createOrder'), 'Order!');
    assert.equal(typeString(schema, 'Mutation', 'updateOrder'), 'Order!');
    assert.equal(typeString(schema, 'Mutation', 'deleteOrder'), 'DeleteResult!');
    const update = schema.getMutationType()!.getFields().updateOrder!;
    assert.deepEqual(update.args.map((a) => `${a.name}: ${String(a.type)}`), ['id: ID!', 'input: OrderUpdateInput!', 'ifMatch: String']);
    assert.equal(typeString(schema, 'OrderCreateInput', 'total'), 'Decimal!');
    assert.equal(typeString(schema, 'OrderCreateInput', 'customer'), 'ID!');
    assert.equal(typeString(schema, 'OrderCreateInput', 'placedAt'), 'DateTime');
    assert.equal(typeString(schema, 'CustomerCreateInput', 'tier'), 'CustomerTier', 'a defaulted field is optional on create');
    for (const f of Object.values((schema.getType('OrderUpdateInput') as GraphQLInputObjectType).getFields())) assert.ok(!isNonNullType(f.type), `${f.name} optional on update`);
    assert.equal(typeString(schema, 'DeleteResult', 'deleted'), 'Boolean!');
    assert.equal(typeString(schema, 'Subscription', 'orderChanged'), 'OrderChange!');
    assert.equal(typeString(schema, 'OrderChange', 'kind'), 'ChangeKind!');
    assert.equal(typeString(schema, 'OrderChange', 'changedFields'), '[String!]!');
    assert.deepEqual((schema.getType('ChangeKind') as GraphQLEnumType).getValues().map((v) => v.name), ['CREATED', 'UPDATED', 'DELETED']);
    assert.equal(getNamedType(schema.getSubscriptionType()!.getFields().orderChanged!.args[0]!.type).name, 'OrderFilter');
  });

  it('is served under /api/graphql/schema too, to a granted user, and follows the publication', async () => {
    const email = `${randomUUID()}@example.com`;
    const anon = new Client(server.url, { tenant, project });
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const user = anon.with({ token: login.body.accessToken });
    const r = await user.get('/api/graphql/schema');
    expectStatus(r, 200);
    assert.ok(buildSchema(r.text).getType('Order'));
    expectError(await anon.get('/graphql/schema'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');

    await defineEntity(admin, { entityName: 'Invoice', fields: [{ name: 'number', type: 'Int', nullable: false }] });
    const next = buildSchema((await admin.get('/graphql/schema')).text);
    assert.equal(typeString(next, 'Query', 'invoices'), 'InvoiceConnection!');
    assert.equal(typeString(next, 'Invoice', 'number'), 'Int!');
  });

  it('refuses an entity whose derived GraphQL type names another entity already takes', async () => {
    // `Order.status` derives the enum `OrderStatus`; an entity of that name would collide with it.
    const r = await admin.post('/api/Schema/entities', { entityName: 'OrderStatus', fields: [{ name: 'label', type: 'String', nullable: true }] });
    expectError(r, 422, 'VALIDATION_FAILED', 'Schema.NameCollision');
    const edge = await admin.post('/api/Schema/entities', { entityName: 'OrderEdge', fields: [{ name: 'label', type: 'String', nullable: true }] });
    expectError(edge, 422, 'VALIDATION_FAILED', 'Schema.NameCollision');
    const reserved = await admin.post('/api/Schema/entities', { entityName: 'SortDirection', fields: [{ name: 'label', type: 'String', nullable: true }] });
    assert.equal(reserved.status, 422);
  });
});
