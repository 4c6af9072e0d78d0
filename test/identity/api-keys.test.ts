/**
 * Project API keys (CONTRACT: Authorization → API keys) through the real
 * server: created by the platform admin, the secret revealed exactly once,
 * the key acting with exactly its grants on its own project only, listed
 * without secrets, and refused from the request after its deletion, on this
 * node and (cluster test) on every other node at once.
 */
import { collectBody } from '../support/stream-body.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { createKey } from '../support/api-keys.js';
import { expectError, expectStatus } from '../support/expect.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase, forEachBackend, startServer, type TestServer } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

/** `plk_<32 hex key id>_`: what precedes the random part (base64url, which may itself contain `_`). */
const KEY_HEAD = 'plk_'.length + 32 + 1;


/** Sends one realtime subscribe over a fresh WebSocket and returns the answer to it. */
async function subscribeOnce(url: string, headers: Record<string, string>, entity: string): Promise<Record<string, any>> {
  const ws = new WebSocket(url, [], { headers });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const reply = new Promise<Record<string, any>>((resolve) => ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as Record<string, any>;
      if (m.id === 's') resolve(m);
    }));
    ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity }));
    return await reply;
  } finally {
    ws.terminate();
  }
}

forEachBackend('API keys', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let tenant: string;
  let project: string;

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ client: admin, projectId, tenant, project } = p);
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: true }] });
    await defineEntity(admin, { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: true }] });
    expectStatus(await admin.post('/api/orders', { total: 7 }), 201);
  });
  after(async () => { await server?.close(); });

  it('creates a key whose secret is revealed once and never answered otherwise', async () => {
    const r = await admin.post(`/api/projects/${projectId}/api-keys`, { name: 'ci', grants: ['entity:Order:read'], scopes: ['mcp:tools'] });
    expectStatus(r, 201);
    const data = r.body.data;
    assert.match(data.id, /^[0-9a-f-]{36}$/);
    assert.match(data.revealTokenId, /^[0-9a-f-]{36}$/);
    assert.deepEqual([data.name, data.projectId, data.grants, data.scopes], ['ci', projectId, ['entity:Order:read'], ['mcp:tools']]);
    assert.ok(!/plk_[0-9a-f]{32}_/.test(r.text), 'the create answer carries no secret');

    const reveal = () => admin.post(`/api/CredentialReveal/${data.revealTokenId}/reveal`);
    const first = await reveal();
    expectStatus(first, 200);
    const secret: string = first.body.data.secret;
    assert.match(secret, /^plk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    assert.ok(secret.length >= 16);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    expectError(await reveal(), 404, 'NOT_FOUND', 'CredentialReveal.NotFound');
    // Only the hash stays: the sealed copy that served the reveal is gone.
    const left = await server.node.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM plinth.secrets WHERE reveal_once');
    assert.equal(Number(left.rows[0]!.n), 0);

    const key = admin.with({ token: secret });
    expectStatus(await key.get('/api/orders'), 200);
  });

  it('acts with exactly its grants: role grants do not reach it, anything beyond is 403', async () => {
    // Every authenticated user may insert orders; the key still may not.
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:insert' }), 201);
    const { secret } = await createKey(admin, projectId, { name: 'reader', grants: [{ grant: 'entity:Order:read', rowFilter: { total: { gt: 1 } }, fields: ['total'] }] });
    const key = admin.with({ token: secret });
    const list = await key.get('/api/orders');
    expectStatus(list, 200);
    assert.ok(list.body.data.length >= 1);
    const denied = expectError(await key.post('/api/orders', { total: 1 }), 403, 'ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(denied.missingGrants, ['entity:Order:insert']);
    // Admin-only routes stay admin-only for a key.
    expectError(await key.post(`/api/projects/${projectId}/api-keys`, { name: 'x', grants: [] }), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    // The row-policy parts are recorded as given.
    const listed = await admin.get(`/api/projects/${projectId}/api-keys`);
    const reader = listed.body.data.find((k: { name: string }) => k.name === 'reader');
    assert.deepEqual(reader.grants, [{ grant: 'entity:Order:read', rowFilter: { total: { gt: 1 } }, fields: ['total'] }]);
  });

  it('is audited as apikey:<id> and holds on realtime subscriptions too', async () => {
    const { id, secret } = await createKey(admin, projectId, { name: 'rt', grants: ['entity:Order:read'] });
    const headers = { 'x-service-tenant': tenant, 'x-service-project': project, authorization: `Bearer ${secret}` };
    const wsUrl = `${server.url.replace('http', 'ws')}/api/realtime`;
    assert.equal((await subscribeOnce(wsUrl, headers, 'Order')).type, 'subscribed');
    const refused = await subscribeOnce(wsUrl, headers, 'Note');
    assert.deepEqual([refused.type, refused.status, refused.reasonCode], ['error', 403, 'ExposureBinding.RequiredGrantMissing']);

    expectStatus(await admin.with({ token: secret }).get('/api/orders'), 200);
    await server.node.services.audit.flush();
    const audit = await admin.get(`/api/audit?filter=${encodeURIComponent(JSON.stringify({ actor: `apikey:${id}` }))}`);
    expectStatus(audit, 200);
    assert.ok(audit.body.data.some((row: { operationId: string }) => row.operationId === 'Entity.Order.List'), audit.text.slice(0, 400));
  });

  it('is no credential on another project', async () => {
    const { secret } = await createKey(admin, projectId, { name: 'home', grants: ['entity:*:*'] });
    const other = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(other.client, { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: true }] });
    const r = await other.client.with({ token: secret }).get('/api/orders');
    expectError(r, 401, 'UNAUTHORIZED', 'Auth.TokenProjectMismatch');
  });

  it('lists keys without their secrets', async () => {
    const { id, secret } = await createKey(admin, projectId, { name: 'listed', grants: ['entity:Order:read'] });
    const r = await admin.get(`/api/projects/${projectId}/api-keys`);
    expectStatus(r, 200);
    const mine = r.body.data.find((k: { id: string }) => k.id === id);
    assert.ok(mine !== undefined);
    assert.equal(mine.keyPrefix, `plk_${id.replace(/-/g, '')}`);
    assert.ok(!r.text.includes(secret), 'the secret appears nowhere in the list');
    assert.ok(!r.text.includes(secret.slice(KEY_HEAD)), 'nor its random part');
    assert.ok(!/secret|hash/i.test(Object.keys(mine).join(',')), `no secret-ish property: ${Object.keys(mine).join(',')}`);
  });

  it('is refused from the request after its deletion', async () => {
    const { id, secret } = await createKey(admin, projectId, { name: 'doomed', grants: ['entity:Order:read'] });
    const key = admin.with({ token: secret });
    expectStatus(await key.get('/api/orders'), 200); // cached on this node now
    expectStatus(await admin.delete(`/api/projects/${projectId}/api-keys/${id}`), 204);
    expectError(await key.get('/api/orders'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    expectError(await admin.delete(`/api/projects/${projectId}/api-keys/${id}`), 404, 'NOT_FOUND', 'ApiKey.NotFound');
    const listed = await admin.get(`/api/projects/${projectId}/api-keys`);
    assert.ok(!listed.body.data.some((k: { id: string }) => k.id === id));
  });

  it('deleting a key closes its open realtime WebSocket (4401, ApiKey.Revoked) and ends its SSE stream', async () => {
    const { id, secret } = await createKey(admin, projectId, { name: 'live', grants: ['entity:Order:read'] });
    const headers = { 'x-service-tenant': tenant, 'x-service-project': project, authorization: `Bearer ${secret}` };
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/realtime`, { headers });
    const inbox: Array<Record<string, any>> = [];
    ws.on('message', (d) => inbox.push(JSON.parse(d.toString()) as Record<string, any>));
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const abort = new AbortController();
    try {
      ws.send(JSON.stringify({ type: 'subscribe', id: 'o', entity: 'Order' }));
      const deadline = Date.now() + 10_000;
      while (!inbox.some((m) => m.type === 'subscribed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(inbox.some((m) => m.type === 'subscribed'), JSON.stringify(inbox));
      const sse = await fetch(`${server.url}/api/realtime/sse?entity=Order`, { headers, signal: abort.signal });
      assert.equal(sse.status, 200);
      const stream = collectBody(sse);

      expectStatus(await admin.delete(`/api/projects/${projectId}/api-keys/${id}`), 204);
      const code = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
      assert.equal(code, 4401, `the WebSocket stayed open after its key was deleted: ${JSON.stringify(inbox)}`);
      assert.deepEqual([inbox.at(-1)!.type, inbox.at(-1)!.reasonCode], ['error', 'ApiKey.Revoked']);
      const done = await Promise.race([stream.ended, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
      assert.notEqual(done, null, `the SSE stream stayed open after its key was deleted: ${JSON.stringify(stream.text)}`);
      assert.match(stream.text, /event: error\ndata: .*ApiKey\.Revoked/);
    } finally {
      abort.abort();
      ws.terminate();
    }
  });

  it('refuses a forged key with a valid prefix and id but the wrong secret', async () => {
    const { secret } = await createKey(admin, projectId, { name: 'real', grants: ['entity:Order:read'] });
    const forged = `${secret.slice(0, KEY_HEAD)}${randomBytes(32).toString('base64url')}`;
    assert.notEqual(forged, secret);
    for (const token of [forged, `plk_${randomUUID().replace(/-/g, '')}_${randomBytes(32).toString('base64url')}`, 'plk_nonsense']) {
      expectError(await admin.with({ token }).get('/api/orders'), 401, 'UNAUTHORIZED', 'Auth.InvalidToken');
    }
    expectStatus(await admin.with({ token: secret }).get('/api/orders'), 200);
  });

  it('answers bad input with 422 naming the field, an unknown project with 404, a user with 403', async () => {
    const path = `/api/projects/${projectId}/api-keys`;
    expectError(await admin.post(path, { grants: [] }), 422, 'VALIDATION_FAILED', 'ApiKey.MissingProperty', 'name');
    expectError(await admin.post(path, { name: 'x', grants: 'entity:Order:read' }), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidProperty', 'grants');
    expectError(await admin.post(path, { name: 'x' }), 422, 'VALIDATION_FAILED', 'ApiKey.MissingProperty', 'grants');
    expectError(await admin.post(path, { name: 'x', grants: ['entity:Order:write'] }), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidGrant', 'grants[0]');
    expectError(await admin.post(path, { name: 'x', grants: ['entity:Order:read', 'order:read'] }), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidGrant', 'grants[1]');
    expectError(await admin.post(path, { name: 'x', grants: [{ grant: 'nope' }] }), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidGrant', 'grants[0].grant');
    expectError(await admin.post(path, { name: 'x', grants: [{ grant: 'entity:Order:read', rowFilter: [1] }] }), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidGrant', 'grants[0].rowFilter');
    expectError(await admin.post(path, { name: 'x', grants: [], scopes: 'all' }), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidProperty', 'scopes');
    expectError(await admin.post(path, { name: 'x', grants: [], secret: 'mine' }), 422, 'VALIDATION_FAILED', 'ApiKey.UnknownProperty', 'secret');
    expectError(await admin.post(path, [1]), 422, 'VALIDATION_FAILED', 'ApiKey.InvalidBody');
    expectError(await admin.post(`/api/projects/${randomUUID()}/api-keys`, { name: 'x', grants: [] }), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');
    expectError(await admin.get('/api/projects/not-a-uuid/api-keys'), 404, 'NOT_FOUND', 'Scope.ProjectNotFound');

    const anon = new Client(server.url, { tenant, project });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const user = anon.with({ token: login.body.accessToken });
    expectError(await user.post(path, { name: 'x', grants: [] }), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
    expectError(await user.get(path), 403, 'ACCESS_DENIED', 'Access.AdminRequired');
  });
});


describe('API keys in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: PlinthProcess;
  let b: PlinthProcess;
  const token = 'cluster-apikeys-admin-token-0123456789';

  before(async () => {
    nats = await NatsCluster.start(1);
    db = await createTestDatabase();
    [a, b] = await Promise.all(['ak-a', 'ak-b'].map((nodeId) => startPlinthProcess({ databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId })));
  });
  after(async () => {
    await reapPlinthProcesses();
    await nats?.stop();
    await db?.drop();
  });

  it('a key deleted through node A is refused by node B at once, inside B\'s cache TTL', async () => {
    const { client, projectId, tenant, project } = await bootstrapProject(a.url, token);
    await defineEntity(client, { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: true }] });
    const { id, secret } = await createKey(client, projectId, { name: 'everywhere', grants: ['entity:Order:read'] });
    const onB = new Client(b.url, { token: secret, tenant, project });
    // B serves the key (and caches it for API_KEY_CACHE_TTL_MS = 3 s).
    let r = await onB.get('/api/orders');
    for (let i = 0; r.status !== 200 && i < 100; i++) {
      await new Promise((res) => setTimeout(res, 100)); // B may still be loading the new publication
      r = await onB.get('/api/orders');
    }
    expectStatus(r, 200);
    // An SSE stream the key holds open on B.
    const abort = new AbortController();
    const sse = await fetch(`${b.url}/api/realtime/sse?entity=Order`, {
      headers: { authorization: `Bearer ${secret}`, 'x-service-tenant': tenant, 'x-service-project': project }, signal: abort.signal,
    });
    assert.equal(sse.status, 200);
    const stream = collectBody(sse);
    r = await onB.get('/api/orders');
    expectStatus(r, 200);
    const warmedAt = Date.now();
    expectStatus(await client.delete(`/api/projects/${projectId}/api-keys/${id}`), 204);
    // The bus announcement, not the TTL, must refuse it: poll well inside the TTL.
    let status = 0;
    while (Date.now() - warmedAt < 1_500) {
      status = (await onB.get('/api/orders')).status;
      if (status === 401) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(status, 401, 'node B still accepted the deleted key');
    const done = await Promise.race([stream.ended, new Promise<null>((res) => setTimeout(() => res(null), 5_000))]);
    abort.abort();
    assert.notEqual(done, null, `node B kept the deleted key's SSE stream open: ${JSON.stringify(stream.text)}`);
    assert.match(stream.text, /ApiKey\.Revoked/);
  });
});
