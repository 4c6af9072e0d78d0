/**
 * The served OpenAPI document: valid 3.1, pinned to the live publication,
 * consistent with the schema metadata, and the same in JSON and YAML.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { Client, bootstrapProject, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';
import { assertValidOpenApi, deref, shape } from '../support/openapi-doc.js';

type Project = Awaited<ReturnType<typeof bootstrapProject>>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];




/** Asserts that an answer's `data` (an object) has the fields the named envelope schema documents, and no others. */
function assertDataMatches(doc: Json, envelope: string, data: Json, what: string): void {
  const s = shape(doc, deref(doc, { $ref: `#/components/schemas/${envelope}` }).properties.data);
  for (const k of s.required) assert.ok(k in data, `${what}: documented field ${k} missing`);
  for (const k of Object.keys(data)) assert.ok(s.known.includes(k), `${what}: field ${k} not documented`);
}

function operationIds(doc: Json): string[] {
  const out: string[] = [];
  for (const item of Object.values(doc.paths as Json)) for (const m of HTTP_METHODS) if (item[m] !== undefined) out.push(item[m].operationId);
  return out;
}

const CUSTOMER = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'tier', type: 'Enum', nullable: false, values: ['free', 'pro'], default: 'free' },
  ],
};
const ORDER = {
  entityName: 'Order',
  softDelete: true,
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'placedAt', type: 'DateTime', nullable: true },
    { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
  ],
};

forEachBackend('openapi over HTTP', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let client: Client;

  async function metadata(): Promise<Json> {
    const r = await client.get('/api/Schema/entities/metadata');
    expectStatus(r, 200);
    return r.body.data;
  }
  async function openApi(base = '/api', c: Client = client): Promise<{ reply: Reply; doc: Json }> {
    const reply = await c.get(`${base}/openapi.json`);
    expectStatus(reply, 200);
    assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
    return { reply, doc: reply.body };
  }

  before(async () => {
    server = await startServer({ backend, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    p = await bootstrapProject(server.url, server.adminToken, `o${randomUUID().slice(0, 8)}`);
    client = p.client;
    await defineEntity(client, CUSTOMER);
    await defineEntity(client, ORDER);
  });
  after(async () => {
    await server?.close();
  });

  it('serves a valid OpenAPI 3.1 document pinned to the live publication', async () => {
    const { doc } = await openApi();
    await assertValidOpenApi(doc);
    const meta = await metadata();
    assert.equal(meta.publicationVersion, 2);
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc['x-publication-version'], meta.publicationVersion);
    assert.equal(doc.info.version, `publication-${meta.publicationVersion}`);
    assert.equal(doc.info.title, `Plinth ${p.tenant}/${p.project}`);
    assert.deepEqual(doc.servers, [{ url: '/api' }]);
    const ids = operationIds(doc);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    for (const e of meta.entities) for (const op of e.operations) assert.ok(ids.includes(op.operationId), `${op.operationId} missing`);

    // Each REST binding's route is the document's operation of the same id (GraphQL bindings name root fields).
    for (const e of meta.entities) {
      for (const b of e.bindings.filter((x: { protocolKind: string }) => x.protocolKind === 'Rest')) {
        const [method, path] = (b.routeOrName as string).split(' ') as [string, string];
        assert.equal(doc.paths[path]?.[method.toLowerCase()]?.operationId, b.capabilityId, b.routeOrName);
      }
    }
    // Served from memory per publication: byte-identical on re-read.
    const again = await client.get('/api/openapi.json');
    assert.equal(again.text, (await client.get('/api/openapi.json')).text);
  });

  it('changes with the publication after a schema change', async () => {
    const before = (await openApi()).doc;
    assert.equal(before.paths['/invoices'], undefined);
    const change = await client.post('/api/Schema/entities', { entityName: 'Invoice', fields: [{ name: 'number', type: 'Int', nullable: false, unique: true }] });
    expectStatus(change, 201);
    const version = change.body.data.publicationVersion as number;
    assert.equal(version, before['x-publication-version'] + 1);

    const { doc } = await openApi();
    await assertValidOpenApi(doc);
    assert.equal(doc['x-publication-version'], version);
    assert.equal(doc.info.version, `publication-${version}`);
    assert.equal(doc.paths['/invoices'].get.operationId, 'Entity.Invoice.List');
    assert.equal(doc.paths['/invoices'].post.operationId, 'Entity.Invoice.Create');
    assert.equal(doc.paths['/invoices/{id}'].get.operationId, 'Entity.Invoice.Read');
    const ids = operationIds(doc);
    for (const e of (await metadata()).entities) for (const op of e.operations) assert.ok(ids.includes(op.operationId), `${op.operationId} missing`);
    // Everything the old document had is still there.
    for (const path of Object.keys(before.paths)) assert.ok(doc.paths[path] !== undefined, path);

    // Removing it takes the paths away again.
    expectStatus(await client.delete('/api/Schema/entities?entityName=Invoice'), 200);
    const removed = (await openApi()).doc;
    assert.equal(removed['x-publication-version'], version + 1);
    assert.equal(removed.paths['/invoices'], undefined);
    assert.deepEqual(Object.keys(removed.paths).sort(), Object.keys(before.paths).sort());
  });

  it('openapi.yaml is the same document', async () => {
    const { doc } = await openApi();
    const y = await client.get('/api/openapi.yaml');
    expectStatus(y, 200);
    assert.match(y.headers.get('content-type') ?? '', /^application\/yaml/);
    assert.ok(y.headers.get('x-service-correlation-id'));
    assert.deepEqual(parseYaml(y.text), doc);
    const y1 = await client.get('/v1/openapi.yaml');
    expectStatus(y1, 200);
    assert.deepEqual(parseYaml(y1.text), (await openApi('/v1')).doc);
  });

  it('/v1/openapi.json names the /v1 server and otherwise matches', async () => {
    const api = (await openApi()).doc;
    const { doc } = await openApi('/v1');
    await assertValidOpenApi(doc);
    assert.deepEqual(doc.servers, [{ url: '/v1' }]);
    assert.deepEqual({ ...doc, servers: api.servers }, api);
  });

  it('describes the webhook, realtime and audit routes as they answer', async () => {
    const { doc } = await openApi();
    const expected: Array<[string, string]> = [
      ['get', '/webhooks/endpoints'], ['post', '/webhooks/endpoints'], ['get', '/webhooks/endpoints/{id}'], ['put', '/webhooks/endpoints/{id}'],
      ['patch', '/webhooks/endpoints/{id}'], ['delete', '/webhooks/endpoints/{id}'], ['post', '/webhooks/endpoints/{id}/rotate-secret'],
      ['get', '/webhooks/endpoints/{endpointId}/deliveries'], ['get', '/webhooks/deliveries'], ['post', '/webhooks/deliveries/{deliveryId}/replay'],
      ['post', '/events/{id}/replay'], ['post', '/CredentialReveal/{revealTokenId}/reveal'],
      ['get', '/webhooks/receivers'], ['post', '/webhooks/receivers'], ['get', '/webhooks/receivers/{id}'], ['put', '/webhooks/receivers/{id}'],
      ['delete', '/webhooks/receivers/{id}'], ['get', '/webhooks/diagnostics'], ['post', '/webhooks/inbound/{publicReceiverKey}'], ['post', '/webhooks/{publicReceiverKey}'],
      ['get', '/realtime'], ['get', '/realtime/sse'], ['post', '/realtime/token'], ['get', '/audit'], ['get', '/audit/tail'],
    ];
    for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
    assert.ok(doc.paths['/realtime'].get.responses['101']);
    assert.ok(doc.paths['/realtime/sse'].get.responses['200'].content['text/event-stream']);
    assert.ok(doc.paths['/audit/tail'].get.responses['200'].content['text/event-stream']);

    // The live answers have the documented fields, and endpoint/receiver records no secret.
    const created = await client.post('/api/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', eventTypeFilter: 'entity.Order.*' });
    expectStatus(created, 201);
    assertDataMatches(doc, 'WebhookEndpointWithRevealSingle', created.body.data, 'create endpoint');
    assert.deepEqual(Object.keys(created.body.data).filter((k) => /secret/i.test(k)), ['signingSecretRef']);
    const read = await client.get(`/api/webhooks/endpoints/${created.body.data.id}`);
    expectStatus(read, 200);
    assertDataMatches(doc, 'WebhookEndpointSingle', read.body.data, 'read endpoint');
    const reveal = await client.with({ tenant: undefined, project: undefined }).post(`/api/CredentialReveal/${created.body.data.revealTokenId}/reveal`);
    expectStatus(reveal, 200);
    assertDataMatches(doc, 'RevealedSecret', reveal.body.data, 'reveal');
    expectStatus(await client.post(`/api/CredentialReveal/${created.body.data.revealTokenId}/reveal`), 404);
    const deliveries = await client.get(`/api/webhooks/endpoints/${created.body.data.id}/deliveries?pageSize=5`);
    expectStatus(deliveries, 200);
    assert.ok(Array.isArray(deliveries.body.data) && deliveries.body.page !== undefined);

    const receiver = await client.post('/api/webhooks/receivers', { name: 'billing' });
    expectStatus(receiver, 201);
    assertDataMatches(doc, 'WebhookReceiverWithRevealSingle', receiver.body.data, 'create receiver');
    assert.deepEqual(Object.keys(receiver.body.data).filter((k) => /secret/i.test(k)), ['signingSecretRef']);
    const diagnostics = await client.get('/api/webhooks/diagnostics');
    expectStatus(diagnostics, 200);
    assertDataMatches(doc, 'WebhookDiagnostics', diagnostics.body.data, 'diagnostics');

    const token = await client.post('/api/realtime/token');
    expectStatus(token, 201);
    assertDataMatches(doc, 'RealtimeToken', token.body.data, 'realtime token');

    // Audit rows are written by a buffered writer (~50 ms): wait for the first ones.
    let audit = await client.get('/api/audit?pageSize=5');
    for (let i = 0; i < 100 && audit.status === 200 && audit.body.data.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      audit = await client.get('/api/audit?pageSize=5');
    }
    expectStatus(audit, 200);
    assert.ok(audit.body.data.length > 0);
    const row = shape(doc, { $ref: '#/components/schemas/AuditRecord' });
    // A request's row has exactly the required fields; the optional ones are those of rows authored code leaves (`stage: 'authored'`).
    for (const r of audit.body.data as Json[]) assert.deepEqual(Object.keys(r).sort(), [...row.required].sort());
    const authoredOnly = row.known.filter((k) => !row.required.includes(k)).sort();
    assert.deepEqual(authoredOnly, ['cpuMs', 'fields', 'handler', 'level', 'message', 'outcome', 'peakMemoryBytes', 'sha256', 'stack', 'stage', 'wallMs']);
  });

  it('needs a credential and the scope headers', async () => {
    expectError(await client.with({ token: null }).get('/api/openapi.json'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    expectError(await client.with({ token: null }).get('/api/openapi.yaml'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    expectError(await client.with({ token: 'bogus' }).get('/v1/openapi.json'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    expectError(await new Client(server.url, { token: server.adminToken, project: p.project }).get('/api/openapi.json'), 422, 'VALIDATION_FAILED', 'Scope.TenantHeaderMissing');

    // A user of the project may read the document (it describes routes, not data).
    const anonymous = client.with({ token: null });
    const email = `u${randomUUID().slice(0, 8)}@example.com`;
    expectStatus(await anonymous.post('/api/identity/register', { email, password: 'correct horse 42' }), 201);
    const login = await anonymous.post('/api/identity/login', { email, password: 'correct horse 42' });
    expectStatus(login, 200);
    const asUser = await openApi('/api', client.with({ token: login.body.accessToken }));
    assert.deepEqual(asUser.doc, (await openApi()).doc);
  });
});
