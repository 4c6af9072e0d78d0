/**
 * Explainability over a real server: every error links its decision record,
 * the record is read back by the same actor or the admin (another actor: 404),
 * readPlan explains the list route's own SQL through the database's plan,
 * apiSurface resolves routes through the REST route table, and the
 * publication routes agree with what Schema/entities published.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, Client, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const ROWS = 2000;
const enc = (v: unknown): string => encodeURIComponent(JSON.stringify(v));
const correlationOf = (r: Reply): string => r.headers.get('x-service-correlation-id')!;

forEachBackend('explainability', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let publicationVersion: number;
  let reader: Client;
  let stranger: Client;

  /** A fresh project user holding exactly `grants`. */
  const userWith = async (grants: string[]): Promise<Client> => {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const user = anon.with({ token: login.body.accessToken });
    const me = await user.get('/api/identity/me');
    for (const grant of grants) {
      expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { subjectId: me.body.data.subjectId, grant }), 201);
    }
    return user;
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    const def = await defineEntity(admin, {
      entityName: 'Order',
      fields: [
        { name: 'email', type: 'String', nullable: false, unique: true },
        { name: 'note', type: 'String', nullable: true },
        { name: 'total', type: 'Int', nullable: true },
      ],
    });
    publicationVersion = def.data.publicationVersion;
    // Enough rows that the planner prefers an index wherever one narrows the rows.
    for (let start = 0; start < ROWS; start += 1000) {
      const items = Array.from({ length: 1000 }, (_, i) => ({ email: `u${start + i}@example.com`, note: `n${start + i}`, total: (start + i) % 100 }));
      expectStatus(await admin.post('/api/orders/batch', { items }), 201);
    }
    reader = await userWith(['entity:Order:read']);
    stranger = await userWith([]);
  });
  after(async () => {
    await server?.close();
  });

  it('records a denial: its explainUrl, read by the same user, says Deny at stage Grants with the reason', async () => {
    const denied = await stranger.get('/api/orders');
    const e = expectError(denied, 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    assert.equal(e.explainUrl, `/api/Explainability/access?correlationId=${encodeURIComponent(e.correlationId as string)}`);
    const r = await stranger.get(e.explainUrl as string);
    expectStatus(r, 200);
    const d = r.body.data as Json;
    assert.equal(d.decision, 'Deny');
    assert.equal(d.reasonCode, 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual([d.stage, d.stageNumber, d.stageName], ['Grants', 4, 'Grants']);
    assert.deepEqual(d.fieldMasks, []);
    assert.equal(d.evaluatedFilter, null);
    assert.equal(d.operationId, 'Entity.Order.List');
    assert.equal(d.status, 403);
    assert.equal(d.correlationId, e.correlationId);
    assert.deepEqual(d.missingGrants, ['entity:Order:read']);
    assert.equal(d.bindingId, 'rest:Entity.Order.List');
    // The bare link works with the bearer alone: no scope headers needed.
    const bare = new Client(server.url, { token: stranger.scope.token });
    expectStatus(await bare.get(e.explainUrl as string), 200);
    // /v1 links to /v1.
    const v1 = expectError(await stranger.get('/v1/orders'), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    assert.match(v1.explainUrl as string, /^\/v1\/Explainability\/access\?correlationId=/);
  });

  it('records an allowed request as Allow, naming RowPolicy (the last access stage, which let it through), readable within 10 s of its response', async () => {
    const ok = await reader.get('/api/orders?pageSize=2');
    expectStatus(ok, 200);
    const id = correlationOf(ok);
    const r = await reader.get(`/api/Explainability/access?correlationId=${encodeURIComponent(id)}`);
    expectStatus(r, 200);
    const d = r.body.data as Json;
    assert.deepEqual([d.decision, d.reasonCode, d.stage, d.stageNumber, d.status, d.operationId], ['Allow', 'Access.Allowed', 'RowPolicy', 6, 200, 'Entity.Order.List']);
    assert.deepEqual(d.fieldMasks, []);
  });

  it('names the deciding stage: RowPolicy for a masked read, Quota for a quota refusal', async () => {
    const masked = await userWith([]);
    const me = await masked.get('/api/identity/me');
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { subjectId: me.body.data.subjectId, grant: 'entity:Order:read', fields: ['email', 'total'] }), 201);
    const m = await masked.get('/api/orders?pageSize=1');
    expectStatus(m, 200);
    assert.equal('note' in m.body.data[0], false);
    const md = (await masked.get(`/api/Explainability/access?correlationId=${correlationOf(m)}`)).body.data;
    assert.deepEqual([md.decision, md.stage, md.fieldMasks], ['Mask', 'RowPolicy', ['note']]);

    const other = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(other.client, { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }] });
    expectStatus(await other.client.post(`/api/Usage/${other.projectId}/quotas`, { kind: 'read.monthly', limit: 1, mode: 'hard' }), 201);
    expectStatus(await other.client.get('/api/tags'), 200);
    const refused = expectError(await other.client.get('/api/tags'), 429, 'QUOTA_EXCEEDED', 'Quota.ReadMonthly.Exhausted');
    const qd = (await other.client.get(refused.explainUrl as string)).body.data;
    assert.deepEqual([qd.decision, qd.stage, qd.stageNumber], ['Deny', 'Quota', 5]);
  });

  it('gives every error an explainUrl, a validation failure included', async () => {
    const bad = await reader.get('/api/orders?sort=nope');
    const e = expectError(bad, 422, 'VALIDATION_FAILED', 'Query.UnknownSortField', 'sort');
    const r = await reader.get(e.explainUrl as string);
    expectStatus(r, 200);
    assert.deepEqual([r.body.data.reasonCode, r.body.data.status], ['Query.UnknownSortField', 422]);
    const missing = expectError(await admin.with({ token: null }).get('/api/orders'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
    const d = await admin.get(missing.explainUrl as string);
    expectStatus(d, 200);
    assert.deepEqual([d.body.data.decision, d.body.data.stage, d.body.data.actor], ['Deny', 'Authenticate', 'anonymous']);
  });

  it('records refusals made before dispatch (no route, undecodable body) at stage 0 under the caller', async () => {
    const junk = await reader.request('POST', '/api/orders', '{"email": ', { 'content-type': 'application/json' });
    const e = errorOf(junk) as Json;
    assert.ok(junk.status === 400 || junk.status === 422, junk.text);
    const r = await reader.get(e.explainUrl as string);
    expectStatus(r, 200);
    assert.deepEqual([r.body.data.stage, r.body.data.stageNumber, r.body.data.reasonCode, r.body.data.status], ['Adapter', 0, e.reasonCode, junk.status]);
    assert.match(r.body.data.actor as string, /^user:/);
    const lost = expectError(await reader.get('/api/no/such/deep/route/here'), 404, 'NOT_FOUND', 'Route.Unknown');
    const l = await reader.get(lost.explainUrl as string);
    expectStatus(l, 200);
    assert.deepEqual([l.body.data.stage, l.body.data.operationId, l.body.data.decision], ['Adapter', 'Route.Unknown', 'Allow']);
    // Another user cannot read it; an invalid bearer records the refusal as anonymous (admin only).
    expectError(await stranger.get(lost.explainUrl as string), 404, 'NOT_FOUND', 'Explainability.RecordNotFound');
    const forged = expectError(await reader.with({ token: 'not-a-token' }).get('/api/nothing/here/at/all/x'), 404, 'NOT_FOUND', 'Route.Unknown');
    const f = await admin.get(forged.explainUrl as string);
    expectStatus(f, 200);
    assert.equal(f.body.data.actor, 'anonymous');
  });

  it("hides another actor's records (404) and shows any record to the admin", async () => {
    const denied = expectError(await stranger.get('/api/orders'), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    expectError(await reader.get(denied.explainUrl as string), 404, 'NOT_FOUND', 'Explainability.RecordNotFound');
    const asAdmin = await admin.get(denied.explainUrl as string);
    expectStatus(asAdmin, 200);
    assert.equal(asAdmin.body.data.decision, 'Deny');
    assert.match(asAdmin.body.data.actor as string, /^user:/);
    const ok = await reader.get('/api/orders?pageSize=1');
    expectStatus(ok, 200);
    expectError(await stranger.get(`/api/Explainability/access?correlationId=${correlationOf(ok)}`), 404, 'NOT_FOUND', 'Explainability.RecordNotFound');
    expectStatus(await admin.get(`/api/Explainability/access?correlationId=${correlationOf(ok)}`), 200);
    // A correlation id the other actor chose for its own request does not expose the first one's record.
    const shared = `shared-${randomUUID()}`;
    expectStatus(await reader.get('/api/orders?pageSize=1', { 'x-service-correlation-id': shared }), 200);
    expectError(await stranger.get('/api/orders', { 'x-service-correlation-id': shared }), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    const mine = await stranger.get(`/api/Explainability/access?correlationId=${shared}`);
    expectStatus(mine, 200);
    assert.equal(mine.body.data.decision, 'Deny');
    const theirs = await reader.get(`/api/Explainability/access?correlationId=${shared}`);
    expectStatus(theirs, 200);
    assert.equal(theirs.body.data.decision, 'Allow');
  });

  it('refuses a missing or malformed correlationId (422), an unknown one (404) and no bearer (401)', async () => {
    expectError(await admin.get('/api/Explainability/access'), 422, 'VALIDATION_FAILED', 'Explainability.CorrelationIdRequired', 'correlationId');
    expectError(await admin.get('/api/Explainability/access?correlationId=%20x%20'), 422, 'VALIDATION_FAILED', 'Explainability.InvalidCorrelationId', 'correlationId');
    expectError(await admin.get(`/api/Explainability/access?correlationId=${randomUUID()}`), 404, 'NOT_FOUND', 'Explainability.RecordNotFound');
    expectError(await admin.with({ token: null }).get(`/api/Explainability/access?correlationId=${randomUUID()}`), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
  });

  it('readPlan: an index serves a filter on a unique field, none serves an unindexed one, and no SQL is shown', async () => {
    const indexed = await reader.post('/api/Explainability/readPlan', { entity: 'Order', filter: { email: { eq: 'u7@example.com' } } });
    expectStatus(indexed, 200);
    const d = indexed.body.data as Json;
    assert.equal(d.usesIndex, true, JSON.stringify(d));
    assert.ok((d.indexes as string[]).includes('Order_email_key'), JSON.stringify(d.indexes));
    assert.equal(typeof d.plan, 'string');
    assert.match(d.plan as string, /Order_email_key/);
    assert.equal(d.provider, backend);
    assert.equal(d.cacheDecision.cached, false);
    const plain = await reader.post('/api/Explainability/readPlan', { entity: 'orders', filter: { note: { eq: 'n7' } }, sort: '-total' });
    expectStatus(plain, 200);
    assert.equal(plain.body.data.usesIndex, false, JSON.stringify(plain.body.data));
    assert.deepEqual(plain.body.data.sort, ['-total']);
    for (const text of [indexed.text, plain.text]) {
      assert.doesNotMatch(text, /SELECT|WHERE|ORDER BY|u7@example|"n7"|\$1/, 'no SQL text and no filter values in the answer');
    }
    // The filter's JSON text form, as the list route takes it, is accepted too.
    expectStatus(await reader.post('/api/Explainability/readPlan', { entity: 'Order', filter: JSON.stringify({ total: { gt: 5 } }) }), 200);
  });

  it('readPlan refuses what the list route refuses, with the same answers', async () => {
    const badFilter = { nope: { eq: 1 } };
    const listReply = await reader.get(`/api/orders?filter=${enc(badFilter)}`);
    expectStatus(listReply, 422);
    const list = errorOf(listReply);
    expectError(await reader.post('/api/Explainability/readPlan', { entity: 'Order', filter: badFilter }), 422, 'VALIDATION_FAILED', list.reasonCode as string);
    expectError(await reader.post('/api/Explainability/readPlan', { entity: 'Order', sort: 'nope' }), 422, 'VALIDATION_FAILED', 'Query.UnknownSortField', 'sort');
    expectError(await reader.post('/api/Explainability/readPlan', { entity: 'Order', include: ['nope'] }), 422, 'VALIDATION_FAILED', 'Query.UnknownRelation', 'include');
    expectError(await reader.post('/api/Explainability/readPlan', { entity: 'Nope' }), 422, 'VALIDATION_FAILED', 'Explainability.UnknownEntity', 'entity');
    expectError(await reader.post('/api/Explainability/readPlan', {}), 422, 'VALIDATION_FAILED', 'Explainability.EntityRequired', 'entity');
    const denied = expectError(await stranger.post('/api/Explainability/readPlan', { entity: 'Order' }), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(denied.missingGrants, ['entity:Order:read']);
    const unfiltered = await admin.post('/api/Explainability/readPlan', { entity: 'Order' });
    expectStatus(unfiltered, 200);
    // An index that only supplies the order (createdAt, id) does not count: nothing narrows the rows.
    assert.equal(unfiltered.body.data.usesIndex, false, JSON.stringify(unfiltered.body.data));
  });

  it('apiSurface resolves routes through the REST route table and the publication', async () => {
    const list = await reader.get(`/api/Explainability/apiSurface?route=${encodeURIComponent('/api/orders')}`);
    expectStatus(list, 200);
    assert.equal(list.body.data.operationId, 'Entity.Order.List');
    assert.equal(list.body.data.bindingId, 'rest:Entity.Order.List');
    assert.deepEqual(list.body.data.requiredGrants, ['entity:Order:read']);
    assert.equal(list.body.data.method, 'GET');
    assert.equal(list.body.data.binding.bindingId, 'rest:Entity.Order.List');
    const create = await reader.get('/api/Explainability/apiSurface?route=/api/orders&method=POST');
    expectStatus(create, 200);
    assert.deepEqual([create.body.data.operationId, create.body.data.bindingId, create.body.data.requiredGrants], ['Entity.Order.Create', 'rest:Entity.Order.Create', ['entity:Order:insert']]);
    const read = await reader.get(`/api/Explainability/apiSurface?route=/v1/orders/${randomUUID()}`);
    expectStatus(read, 200);
    assert.equal(read.body.data.operationId, 'Entity.Order.Read');
    const audit = await reader.get('/api/Explainability/apiSurface?route=/api/audit');
    expectStatus(audit, 200);
    assert.deepEqual([audit.body.data.operationId, audit.body.data.authn], ['Audit.List', 'admin']);
    expectError(await reader.get('/api/Explainability/apiSurface?route=/api/nothings'), 404, 'NOT_FOUND', 'Explainability.RouteNotFound');
    expectError(await reader.get('/api/Explainability/apiSurface?route=/api/orders&method=DELETE'), 404, 'NOT_FOUND', 'Explainability.RouteNotFound');
    expectError(await reader.get('/api/Explainability/apiSurface?route=/api/no/such/deep/route/here'), 404, 'NOT_FOUND', 'Explainability.RouteNotFound');
    expectError(await reader.get('/api/Explainability/apiSurface'), 422, 'VALIDATION_FAILED', 'Explainability.RouteRequired', 'route');
    expectError(await reader.get('/api/Explainability/apiSurface?route=/api/orders&method=TRACE'), 422, 'VALIDATION_FAILED', 'Explainability.InvalidMethod', 'method');
  });

  it('publication/latest is the version Schema/entities returned; the other publication routes agree', async () => {
    const latest = await reader.get('/api/Explainability/publication/latest');
    expectStatus(latest, 200);
    const l = latest.body.data as Json;
    assert.equal(l.publicationVersion, publicationVersion);
    assert.equal(l.head, true);
    assert.deepEqual(l.entities, ['Order']);
    assert.ok((l.operations as string[]).includes('Entity.Order.List'));
    const one = await reader.get(`/api/Explainability/publication/${publicationVersion}`);
    expectStatus(one, 200);
    assert.deepEqual(one.body.data, l);
    expectError(await reader.get('/api/Explainability/publication/999'), 404, 'NOT_FOUND', 'Explainability.PublicationNotFound');
    expectError(await reader.get('/api/Explainability/publication/abc'), 422, 'VALIDATION_FAILED', 'Explainability.InvalidPublicationVersion', 'publicationVersion');
    const rt = await reader.get('/api/Explainability/projectRuntime');
    expectStatus(rt, 200);
    assert.deepEqual([rt.body.data.publicationVersion, rt.body.data.headVersion, rt.body.data.branch, rt.body.data.projectId], [publicationVersion, publicationVersion, 'main', projectId]);
    const alias = await reader.get('/api/Explainability/project-runtime');
    expectStatus(alias, 200);
    assert.deepEqual({ ...alias.body.data }, { ...rt.body.data });
    // An authored-code route (CONTRACT "Authored code"): the platform admin only, control-plane envelope (test/authored/explain.test.ts).
    expectStatus(await reader.get('/api/Explainability/authoredPublication'), 403);
    const authored = await admin.get('/api/Explainability/authoredPublication');
    expectStatus(authored, 200);
    assert.deepEqual(authored.body.data, { publicationVersion, handlers: [] });
    const surface = await reader.get('/api/Explainability/surface');
    expectStatus(surface, 200);
    assert.ok((surface.body.data.surfaces as Json[]).some((s) => s.surfaceKind === 'ExplainabilitySurface' && s.ordinal === 121));
    // Project routes need the project's scope headers; a token of this project is no credential elsewhere.
    expectError(await admin.with({ token: server.adminToken, project: 'nope' }).get('/api/Explainability/publication/latest'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
  });
});
