import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { validate, compileErrors } from '@readme/openapi-parser';
import type { EntityDef, FieldDef, FieldType, ProjectModel } from '../../runtime/publication/model.js';
import { EMPTY_MODEL } from '../../runtime/publication/model.js';
import { entityOperations } from '../../runtime/publication/operations.js';
import { buildOpenApiDocument, openApiToYaml, type OpenApiInput } from '../../runtime/publication/openapi.js';

type Json = Record<string, any>;

const field = (name: string, type: FieldType, extra: Partial<FieldDef> = {}): FieldDef => ({
  name, type, nullable: false, unique: false, default: null, values: [], references: null, ...extra,
});

const customer: EntityDef = {
  entityName: 'Customer',
  softDelete: false,
  fields: [
    field('email', 'String', { unique: true }),
    field('tier', 'Enum', { values: ['free', 'pro', 'enterprise'] }),
  ],
};
const order: EntityDef = {
  entityName: 'Order',
  softDelete: true,
  fields: [
    field('total', 'Decimal'),
    field('placedAt', 'DateTime', { nullable: true }),
    field('status', 'Enum', { values: ['pending', 'paid', 'shipped'], default: 'pending' }),
    field('meta', 'JSON', { nullable: true }),
    field('customer', 'ID', { references: 'Customer' }),
    field('quantity', 'Int'),
  ],
};
const MODEL: ProjectModel = { entities: [customer, order] };

const input = (model: ProjectModel = MODEL): OpenApiInput => ({ model, publicationVersion: 7, tenantSlug: 'acme', projectSlug: 'shop', basePath: '/api' });

/** Validates a deep clone (the parser mutates its input). */
async function check(doc: Record<string, unknown>): Promise<{ valid: boolean; message: string }> {
  const result = await validate(JSON.parse(JSON.stringify(doc)));
  return { valid: result.valid, message: result.valid ? '' : compileErrors(result) };
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
function operations(doc: Json): Json[] {
  const out: Json[] = [];
  for (const item of Object.values(doc.paths as Json)) for (const m of HTTP_METHODS) if (item[m] !== undefined) out.push(item[m]);
  return out;
}
function findOperation(doc: Json, operationId: string): Json {
  const op = operations(doc).find((o) => o.operationId === operationId);
  assert.ok(op, `operation ${operationId} missing`);
  return op;
}
function deref(doc: Json, node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  const parts = (node.$ref as string).replace(/^#\//, '').split('/');
  let cur: any = doc;
  for (const p of parts) cur = cur?.[p];
  assert.ok(cur, `unresolved ${node.$ref}`);
  return deref(doc, cur);
}

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument(input()) as Json;

  it('validates as OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Plinth acme/shop');
    assert.equal(doc.info.version, 'publication-7');
    assert.deepEqual(doc.servers, [{ url: '/api' }]);
    assert.equal(doc['x-publication-version'], 7);
    const r = await check(doc);
    assert.equal(r.valid, true, r.message);
  });

  it('has every entity operation exactly once, at its path and method, with its grants', () => {
    const ids = operations(doc).map((o) => o.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    const ops = entityOperations(MODEL);
    assert.ok(ops.length > 20);
    for (const op of ops) {
      assert.equal(ids.filter((id) => id === op.operationId).length, 1, op.operationId);
      const o = doc.paths[op.path]?.[op.method.toLowerCase()];
      assert.ok(o, `${op.method} ${op.path}`);
      assert.equal(o.operationId, op.operationId);
      assert.deepEqual(o.tags, [op.entity]);
      assert.deepEqual(o['x-required-grants'], op.requiredGrants);
      assert.ok(o.responses[String(op.successStatus)], `${op.operationId} ${op.successStatus}`);
      if (op.successStatus === 204) assert.equal(o.responses['204'].content, undefined);
    }
    for (const id of ['Identity.Register', 'Identity.Login', 'Identity.Refresh', 'Identity.RefreshAlias', 'Identity.Me', 'Identity.Sessions.List', 'Identity.Sessions.Revoke', 'Events.List', 'Events.Read']) {
      assert.equal(ids.filter((x) => x === id).length, 1, id);
    }
  });

  it('documents Create with Idempotency-Key, 201 and the error envelope', () => {
    const create = findOperation(doc, 'Entity.Order.Create');
    const params = create.parameters.map((p: Json) => deref(doc, p));
    assert.ok(params.some((p: Json) => p.in === 'header' && p.name === 'Idempotency-Key'));
    assert.ok(params.some((p: Json) => p.in === 'header' && p.name === 'X-Service-Tenant' && p.required === true));
    assert.ok(create.responses['201']);
    assert.deepEqual(deref(doc, create.requestBody.content['application/json'].schema), doc.components.schemas.OrderCreateInput);
    const conflict = deref(doc, create.responses['409']);
    assert.equal(conflict.content['application/json'].schema.$ref, '#/components/schemas/ErrorEnvelope');
    const update = findOperation(doc, 'Entity.Order.Update');
    assert.ok(update.parameters.map((p: Json) => deref(doc, p)).some((p: Json) => p.name === 'If-Match'));
    const read = findOperation(doc, 'Entity.Order.Read');
    assert.ok(read.responses['200'].headers.ETag);
    const list = findOperation(doc, 'Entity.Order.List');
    const names = list.parameters.map((p: Json) => deref(doc, p).name);
    for (const n of ['filter', 'sort', 'fields', 'include', 'page', 'pageSize', 'cursor', 'includeTotal']) assert.ok(names.includes(n), n);
    const pageSize = list.parameters.map((p: Json) => deref(doc, p)).find((p: Json) => p.name === 'pageSize');
    assert.equal(pageSize.schema.maximum, 200);
  });

  it('maps field types, nullability, defaults and references', () => {
    const s = doc.components.schemas;
    const total = s.Order.properties.total;
    assert.equal(total.type, 'string');
    const pattern = new RegExp(total.pattern);
    assert.ok(pattern.test('12.50') && pattern.test('-3') && !pattern.test('abc') && !pattern.test('1e5'));
    assert.deepEqual(s.Order.properties.placedAt.type, ['string', 'null']);
    assert.equal(s.Order.properties.placedAt.format, 'date-time');
    assert.equal(s.Order.properties.quantity.type, 'integer');
    assert.equal(s.Order.properties.quantity.format, 'int32');
    assert.equal(s.Order.properties.customer['x-references'], 'Customer');
    assert.equal(s.OrderCreateInput.properties.customer.format, 'uuid');
    assert.deepEqual(deref(doc, s.Order.properties.status).enum, ['pending', 'paid', 'shipped']);
    assert.deepEqual(deref(doc, s.Customer.properties.tier).enum, ['free', 'pro', 'enterprise']);
    assert.equal(s.OrderCreateInput.properties.status.default, 'pending');
    assert.deepEqual(s.OrderCreateInput.required, ['total', 'customer', 'quantity']);
    assert.equal(s.OrderCreateInput.additionalProperties, false);
    assert.equal(s.OrderUpdateInput.required, undefined);
    assert.equal(s.OrderUpdateInput.additionalProperties, false);
    for (const r of ['id', 'total', 'status', 'customer', 'quantity', 'createdAt', 'updatedAt', 'concurrencyToken']) assert.ok(s.Order.required.includes(r), r);
    assert.ok(!s.Order.required.includes('placedAt'));
    assert.deepEqual(s.ErrorEnvelope.properties.error.properties.code.enum.includes('VALIDATION_FAILED'), true);
  });

  it('describes batch, count and relation shapes', () => {
    const bc = findOperation(doc, 'Entity.Order.BatchCreate');
    assert.equal(bc.requestBody.content['application/json'].schema.properties.items.maxItems, 1000);
    const bd = findOperation(doc, 'Entity.Order.BatchDelete');
    assert.equal(deref(doc, bd.responses['200'].content['application/json'].schema).properties.data.properties.deleted.type, 'integer');
    const count = findOperation(doc, 'Entity.Order.Count');
    assert.equal(deref(doc, count.responses['200'].content['application/json'].schema).properties.data.properties.count.type, 'integer');
    const toOne = findOperation(doc, 'Entity.Order.RelationList.customer');
    assert.deepEqual(toOne.responses['200'].content['application/json'].schema.properties.data.anyOf, [{ $ref: '#/components/schemas/Customer' }, { type: 'null' }]);
    const toMany = findOperation(doc, 'Entity.Customer.RelationList.orders');
    assert.equal(toMany.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/OrderList');
    assert.ok(toMany.parameters.some((p: Json) => p.$ref === '#/components/parameters/Cursor'));
    const attach = findOperation(doc, 'Entity.Customer.RelationAttach.orders');
    assert.ok(attach.responses['201']);
  });

  it('YAML output parses back to the same document', () => {
    const yaml = openApiToYaml(doc);
    assert.ok(!/[&*]a\d/.test(yaml), 'no YAML anchors');
    assert.deepEqual(parseYaml(yaml), doc);
  });

  it('is deterministic', () => {
    const again = buildOpenApiDocument(input());
    assert.deepEqual(again, doc);
    assert.equal(JSON.stringify(again), JSON.stringify(doc));
    assert.equal(openApiToYaml(again), openApiToYaml(doc));
  });

  it('validates for an empty model and for colliding names', async () => {
    const empty = buildOpenApiDocument({ ...input(EMPTY_MODEL), basePath: '/v1' }) as Json;
    const r = await check(empty);
    assert.equal(r.valid, true, r.message);
    assert.ok(empty.paths['/identity/login']);

    const clash: ProjectModel = {
      entities: [
        { entityName: 'Order', softDelete: false, fields: [field('status', 'Enum', { values: ['a', 'b'], nullable: true })] },
        { entityName: 'OrderList', softDelete: false, fields: [] },
        { entityName: 'OrderStatus', softDelete: false, fields: [] },
        { entityName: 'Page', softDelete: false, fields: [field('order', 'ID', { references: 'Order', nullable: true }), field('parent', 'ID', { references: 'Page', nullable: true })] },
      ],
    };
    const c = buildOpenApiDocument(input(clash)) as Json;
    const rc = await check(c);
    assert.equal(rc.valid, true, rc.message);
    assert.equal(c.components.schemas.Page.required.includes('number'), true, 'shared Page kept');
    assert.ok(c.components.schemas.Page_2.properties.order);
    assert.equal(c.components.schemas.OrderList.description, 'OrderList row (read model).');
    assert.deepEqual(c.components.schemas.OrderStatus_2.enum, ['a', 'b']);
  });

  it('validation catches a broken document', async () => {
    const broken = JSON.parse(JSON.stringify(doc)) as Json;
    delete broken.components.schemas.Meta;
    const r = await check(broken);
    assert.equal(r.valid, false);
    const dup = JSON.parse(JSON.stringify(doc)) as Json;
    dup.paths['/orders'].get.operationId = 'Entity.Order.Create';
    assert.equal((await check(dup)).valid, false);
  });
});
