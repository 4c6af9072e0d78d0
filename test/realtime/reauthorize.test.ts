/**
 * A realtime subscription is authorized once, at subscribe. When its
 * project is suspended, or a governance envelope over it changes, its open
 * WebSocket connections close (4403, Realtime.GrantsChanged) so the client
 * subscribes again under the current rules, and a suspended project refuses
 * that new subscription (CONTRACT: Project hierarchy and governance).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { Client, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';

interface Live { ws: WebSocket; messages: Json[]; closed: Promise<number> }

forEachBackend('realtime re-authorization on project state and envelope changes', (backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  /** A tenant with a parent and a child project; a Widget entity in the child readable by its users; one user's token. */
  async function setup(): Promise<{ tenant: string; parentId: string; childId: string; token: string }> {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await admin.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const parent = await admin.post('/api/projects/create', { tenant, slug: 'parent', name: 'Parent' });
    const child = await admin.post(`/api/projects/${parent.body.data.id}/children`, { slug: 'child', name: 'Child' });
    expectStatus(child, 201);
    const scoped = admin.with({ tenant, project: 'child' });
    await defineEntity(scoped, { entityName: 'Widget', fields: [{ name: 'name', type: 'String', nullable: true }] });
    expectStatus(await admin.post(`/api/projects/${child.body.data.id}/capability-grants`, { role: 'authenticated', grant: 'entity:Widget:read' }), 201);
    const anon = scoped.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    return { tenant, parentId: parent.body.data.id, childId: child.body.data.id, token: login.body.accessToken };
  }

  async function subscribe(tenant: string, token: string): Promise<Live> {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/realtime`, [], {
      headers: { 'x-service-tenant': tenant, 'x-service-project': 'child', authorization: `Bearer ${token}` },
    });
    const messages: Json[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(d.toString()) as Json));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity: 'Widget' }));
    // The reply: `subscribed`, or an `error` when the subscription is refused.
    const deadline = Date.now() + 10_000;
    while (!messages.some((m) => m.type === 'subscribed' || m.type === 'error')) {
      if (Date.now() > deadline) assert.fail(`no reply to subscribe: ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { ws, messages, closed };
  }

  const closesWithin = (live: Live, ms: number): Promise<number | null> =>
    Promise.race([live.closed, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

  it('suspending the project closes its subscriptions; a new one is refused until it resumes', async () => {
    const s = await setup();
    const live = await subscribe(s.tenant, s.token);
    assert.ok(live.messages.some((m) => m.type === 'subscribed'));
    expectStatus(await admin.post(`/api/projects/${s.childId}/suspend`), 200);
    assert.equal(await closesWithin(live, 5_000), 4403, 'the open subscription closed');
    assert.ok(live.messages.some((m) => m.type === 'error'), JSON.stringify(live.messages));
    await assert.rejects(subscribe(s.tenant, s.token), 'a suspended project accepts no new subscription');
    expectStatus(await admin.post(`/api/projects/${s.childId}/resume`), 200);
    const again = await subscribe(s.tenant, s.token);
    assert.ok(again.messages.some((m) => m.type === 'subscribed'), JSON.stringify(again.messages));
    again.ws.close();
  });

  it('an envelope change on the parent closes the child\'s subscriptions; one that now exceeds it is refused', async () => {
    const s = await setup();
    const live = await subscribe(s.tenant, s.token);
    assert.ok(live.messages.some((m) => m.type === 'subscribed'));
    const put = await admin.put(`/api/projects/${s.parentId}/governance/inheritance-policy`, { envelope: { deniedGrants: ['entity:Widget:read'] } });
    expectStatus(put, 200);
    assert.equal(await closesWithin(live, 5_000), 4403, 'the open subscription closed');
    const refused = await subscribe(s.tenant, s.token);
    const error = refused.messages.find((m) => m.type === 'error');
    assert.ok(error !== undefined && !refused.messages.some((m) => m.type === 'subscribed'), JSON.stringify(refused.messages));
    assert.equal(error.reasonCode ?? error.error?.reasonCode, 'Governance.EnvelopeExceeded', JSON.stringify(error));
    refused.ws.close();
  });
});
