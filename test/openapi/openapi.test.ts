import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { validate, compileErrors } from '@readme/openapi-parser';
import type { EntityDef, FieldDef, FieldType, ProjectModel } from '../../runtime/publication/model.js';
import { EMPTY_MODEL } from '../../runtime/publication/model.js';
import { entityOperations } from '../../runtime/publication/operations.js';
import { buildOpenApiDocument, openApiToYaml, type OpenApiInput } from '../../runtime/publication/openapi.js';
import { declaredOpenApi } from '../../runtime/operations/contract/index.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';
import { STATIC_ROUTES } from '../../adapters/rest/routes.js';
import { REALTIME_SPECS } from '../../runtime/operations/realtime/index.js';

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

/** The platform's declared operations are part of every served document (runtime/operations/control/discovery.ts). */
const PLATFORM = declaredOpenApi(PLATFORM_OPERATIONS);
const input = (model: ProjectModel = MODEL): OpenApiInput => ({ model, publicationVersion: 7, tenantSlug: 'acme', projectSlug: 'shop', basePath: '/api', platform: PLATFORM });

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

/** Property names reachable from a schema (through $ref, allOf/anyOf/oneOf, items, additionalProperties), extensions included. */
function propertyNames(doc: Json, node: unknown, seen = new Set<unknown>()): string[] {
  if (typeof node !== 'object' || node === null || seen.has(node)) return [];
  seen.add(node);
  const n = deref(doc, node as Json);
  if (n !== node) return propertyNames(doc, n, seen);
  const out: string[] = [];
  for (const [k, v] of Object.entries(n.properties ?? {})) out.push(k, ...propertyNames(doc, v, seen));
  for (const key of ['allOf', 'anyOf', 'oneOf']) for (const s of (n[key] ?? []) as unknown[]) out.push(...propertyNames(doc, s, seen));
  for (const key of ['items', 'additionalProperties', 'not', 'x-sse-data']) out.push(...propertyNames(doc, n[key], seen));
  return out;
}

/** Every property name of every response body (any status, any media type) of one operation. */
function responsePropertyNames(doc: Json, op: Json): string[] {
  const out: string[] = [];
  for (const r of Object.values(op.responses as Json)) {
    for (const media of Object.values((deref(doc, r as Json).content ?? {}) as Json)) {
      out.push(...propertyNames(doc, media.schema), ...propertyNames(doc, media['x-sse-data']));
    }
  }
  return out;
}

/** [method, path, operationId, success status] of the webhook, realtime and audit routes. */
const EVENTS_OUT: Array<[string, string, string, string]> = [
  ['get', '/webhooks/endpoints', 'Webhooks.Endpoints.List', '200'],
  ['post', '/webhooks/endpoints', 'Webhooks.Endpoints.Create', '201'],
  ['get', '/webhooks/endpoints/{id}', 'Webhooks.Endpoints.Read', '200'],
  ['put', '/webhooks/endpoints/{id}', 'Webhooks.Endpoints.Update', '200'],
  ['patch', '/webhooks/endpoints/{id}', 'Webhooks.Endpoints.Patch', '200'],
  ['delete', '/webhooks/endpoints/{id}', 'Webhooks.Endpoints.Delete', '204'],
  ['post', '/webhooks/endpoints/{id}/rotate-secret', 'Webhooks.Endpoints.RotateSecret', '200'],
  ['get', '/webhooks/endpoints/{endpointId}/deliveries', 'Webhooks.Endpoints.Deliveries', '200'],
  ['get', '/webhooks/deliveries', 'Webhooks.Deliveries.List', '200'],
  ['post', '/webhooks/deliveries/{deliveryId}/replay', 'Webhooks.Deliveries.Replay', '202'],
  ['post', '/events/{id}/replay', 'Events.Replay', '202'],
  ['post', '/CredentialReveal/{revealTokenId}/reveal', 'CredentialReveal.Reveal', '200'],
  ['get', '/webhooks/receivers', 'Webhooks.Receivers.List', '200'],
  ['post', '/webhooks/receivers', 'Webhooks.Receivers.Create', '201'],
  ['get', '/webhooks/receivers/{id}', 'Webhooks.Receivers.Read', '200'],
  ['put', '/webhooks/receivers/{id}', 'Webhooks.Receivers.Update', '200'],
  ['delete', '/webhooks/receivers/{id}', 'Webhooks.Receivers.Delete', '204'],
  ['get', '/webhooks/diagnostics', 'Webhooks.Diagnostics', '200'],
  ['post', '/webhooks/inbound/{publicReceiverKey}', 'Webhooks.Inbound.Receive', '202'],
  ['post', '/webhooks/{publicReceiverKey}', 'Webhooks.Inbound.ReceiveAlias', '202'],
  ['get', '/realtime', 'Realtime.Connect', '101'],
  ['get', '/realtime/sse', 'Realtime.Sse', '200'],
  ['post', '/realtime/token', 'Realtime.Token', '201'],
  ['get', '/audit', 'Audit.List', '200'],
  ['get', '/audit/tail', 'Audit.Tail', '200'],
];

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
    for (const id of ['Identity.Register', 'Identity.Login', 'Identity.Refresh', 'Identity.RefreshAlias', 'Identity.Me', 'Identity.Sessions.List', 'Identity.Sessions.Revoke', 'Events.List', 'Events.Read', ...EVENTS_OUT.map((e) => e[2])]) {
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

  it('describes the webhook, realtime and audit routes', () => {
    for (const [method, path, id, status] of EVENTS_OUT) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method.toUpperCase()} ${path}`);
      assert.equal(op.operationId, id);
      assert.ok(op.responses[status], `${id} ${status}`);
      assert.ok(op.responses.default, `${id} default`);
      const success = op.responses[status];
      if (status === '204' || status === '101') assert.equal(success.content, undefined, id);
      else assert.ok(success.content['application/json'] ?? success.content['text/event-stream'], id);
      // Request and response bodies are named component schemas.
      const body = op.requestBody?.content['application/json'].schema;
      if (body !== undefined) assert.match(body.$ref, /^#\/components\/schemas\/\w+$/, id);
      const json = success.content?.['application/json']?.schema;
      if (json !== undefined) assert.match(json.$ref, /^#\/components\/schemas\/\w+$/, id);
    }
    const tags = doc.tags.map((t: Json) => t.name);
    for (const t of ['Webhooks', 'Realtime', 'Audit']) assert.ok(tags.includes(t), t);
    for (const n of ['WebhookEndpoint', 'WebhookEndpointInput', 'WebhookEndpointPatch', 'WebhookDelivery', 'WebhookReceiver', 'ReplayAccepted', 'RealtimeToken', 'RealtimeChange', 'AuditRecord', 'InboundReceipt', 'RevealedSecret']) {
      assert.ok(doc.components.schemas[n], n);
    }
    const s = doc.components.schemas;
    assert.equal(findOperation(doc, 'Webhooks.Endpoints.Create').requestBody.content['application/json'].schema.$ref, '#/components/schemas/WebhookEndpointInput');
    assert.equal(findOperation(doc, 'Webhooks.Endpoints.Patch').requestBody.content['application/json'].schema.$ref, '#/components/schemas/WebhookEndpointPatch');
    assert.equal(findOperation(doc, 'Events.Replay').requestBody.content['application/json'].schema.$ref, '#/components/schemas/EventReplayInput');
    assert.deepEqual(s.WebhookDelivery.properties.state.enum, ['Pending', 'Claimed', 'Succeeded', 'RetryScheduled', 'DeadLettered']);
    assert.ok(findOperation(doc, 'Webhooks.Deliveries.Replay').responses['409'], 'replay of an in-flight delivery');

    // SSE routes: text/event-stream with the event name and the schema of `data:`.
    for (const [id, event, data] of [['Realtime.Sse', 'service.event', 'RealtimeChange'], ['Audit.Tail', 'service.audit', 'AuditRecord'], ['Events.Tail', 'service.event', 'Event']]) {
      const media = findOperation(doc, id!).responses['200'].content['text/event-stream'];
      assert.ok(media, id);
      assert.equal(media['x-sse-event'], event);
      assert.equal(media['x-sse-data'].$ref, `#/components/schemas/${data}`);
    }
    const sse = findOperation(doc, 'Realtime.Sse');
    assert.ok(sse.parameters.map((p: Json) => deref(doc, p)).some((p: Json) => p.name === 'entity' && p.in === 'query' && p.required === true));
    assert.ok(sse.responses['429']);
    assert.ok(findOperation(doc, 'Audit.Tail').parameters.map((p: Json) => deref(doc, p)).some((p: Json) => p.name === 'Last-Event-ID' && p.in === 'header'));

    // The WebSocket: 101 pointing at docs/realtime.md, JSON errors before the upgrade.
    const ws = findOperation(doc, 'Realtime.Connect');
    assert.deepEqual(ws.tags, ['Realtime']);
    assert.match(ws.responses['101'].description, /WebSocket/);
    assert.match(ws.responses['101'].description, /docs\/realtime\.md/);
    for (const e of ['401', '403', '404', '429']) {
      assert.equal(deref(doc, ws.responses[e]).content['application/json'].schema.$ref, '#/components/schemas/ErrorEnvelope', e);
    }

    // Who may call: management is admin-only; inbound delivery is public (signature instead); reveal needs no scope headers.
    assert.deepEqual(findOperation(doc, 'Webhooks.Endpoints.List').security, [{ adminToken: [], tenantHeader: [], projectHeader: [] }]);
    assert.deepEqual(findOperation(doc, 'Webhooks.Inbound.Receive').security, []);
    const inbound = findOperation(doc, 'Webhooks.Inbound.Receive').parameters.map((p: Json) => deref(doc, p));
    assert.ok(inbound.some((p: Json) => p.name === 'Service-Signature' && p.in === 'header' && p.required === true));
    assert.ok(!inbound.some((p: Json) => p.name === 'X-Service-Tenant'));
    const reveal = findOperation(doc, 'CredentialReveal.Reveal');
    assert.deepEqual(reveal.security, [{ adminToken: [] }]);
    assert.ok(reveal.responses['200'].headers['Cache-Control']);
    assert.equal(findOperation(doc, 'Realtime.Token').security, undefined, 'user or admin: the global security');
  });

  it('covers every webhook, realtime and audit route of the router with the same operation id', () => {
    const covered = /^(webhooks\/|realtime\/|audit|events\/:id\/replay|CredentialReveal\/)/;
    const routes = STATIC_ROUTES.filter((r) => covered.test(r.path));
    assert.ok(routes.length >= 24);
    for (const r of routes) {
      const path = `/${r.path.replace(/:(\w+)/g, '{$1}')}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      assert.ok(op, `${r.method} ${path} is documented`);
      // The alias shares its spec with /webhooks/inbound/…; operation ids are unique in the document.
      assert.equal(op.operationId, path === '/webhooks/{publicReceiverKey}' ? `${r.spec.id}Alias` : r.spec.id, `${r.method} ${path}`);
      assert.equal(op.security?.length === 0, r.spec.authn === 'public', `${r.method} ${path} security`);
    }
    // The WebSocket route is registered by the realtime adapter, not the route table.
    assert.equal(doc.paths['/realtime'].get.operationId, REALTIME_SPECS.connect.id);
  });

  it('documents every Explainability route of the router with its operation id (an alias as `<id>Alias`)', () => {
    const routes = STATIC_ROUTES.filter((r) => r.path.startsWith('Explainability/'));
    assert.ok(routes.length >= 11);
    for (const r of routes) {
      const path = `/${r.path.replace(/:(\w+)/g, '{$1}')}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      assert.ok(op, `${r.method} ${path} is documented`);
      const alias = /^Explainability\/(access\/read|project-runtime)$/.test(r.path);
      assert.equal(op.operationId, alias ? `${r.spec.id}Alias` : r.spec.id, `${r.method} ${path}`);
    }
  });

  it('never puts a secret in a webhook response schema (except the one-time reveal)', () => {
    const ops: Array<[string, Json]> = [];
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      if (!/^\/(webhooks\/|events\/\{id\}\/replay|CredentialReveal\/)/.test(path)) continue;
      for (const m of HTTP_METHODS) if (item[m] !== undefined) ops.push([path, item[m]]);
    }
    assert.ok(ops.length >= 20);
    let endpointRefs = 0;
    for (const [path, op] of ops) {
      const names = responsePropertyNames(doc, op);
      const secretish = names.filter((n) => /secret/i.test(n));
      if (path.startsWith('/CredentialReveal/')) {
        assert.deepEqual(secretish, ['secret'], 'the reveal route is the one-time exception');
        continue;
      }
      assert.deepEqual(secretish.filter((n) => n !== 'signingSecretRef'), [], `${op.operationId} exposes ${secretish.join(', ')}`);
      if (path.startsWith('/webhooks/endpoints') && op.responses['204'] === undefined && !path.endsWith('/deliveries')) {
        assert.ok(names.includes('signingSecretRef'), `${op.operationId} shows signingSecretRef`);
        endpointRefs++;
      }
    }
    assert.equal(endpointRefs, 6, 'list, create, read, replace, patch, rotate-secret');
    // The walker does see secrets: a request body holds `signingSecret` (write-only).
    assert.ok(propertyNames(doc, findOperation(doc, 'Webhooks.Endpoints.Create').requestBody.content['application/json'].schema).includes('signingSecret'));
  });

  it('documents the API key routes like the router, admin only, with no secret in any answer', () => {
    const routes = STATIC_ROUTES.filter((r) => r.path.startsWith('projects/:projectId/api-keys'));
    assert.equal(routes.length, 3);
    for (const r of routes) {
      const path = `/${r.path.replace(/:(\w+)/g, '{$1}')}`;
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      assert.ok(op, `${r.method} ${path} is documented`);
      assert.equal(op.operationId, r.spec.id);
      assert.deepEqual(op.security, [{ adminToken: [] }], `${r.spec.id}: platform admin, project from the path`);
      assert.deepEqual(responsePropertyNames(doc, op).filter((n) => /secret|hash/i.test(n)), [], `${r.spec.id} exposes no secret`);
    }
    const create = findOperation(doc, 'Projects.ApiKeys.Create');
    assert.ok(propertyNames(doc, create.responses['201'].content['application/json'].schema).includes('revealTokenId'));
    assert.ok(propertyNames(doc, create.requestBody.content['application/json'].schema).includes('rowFilter'));
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
