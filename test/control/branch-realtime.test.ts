/**
 * Realtime is scoped by X-Service-Branch (CONTRACT: "Branches"): a WebSocket subscriber on a
 * branch receives that branch's changes only, and a subscriber on main none of them.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';
import { controlData, newSlug } from './support.js';

const WAIT_MS = 10_000;

/** One WebSocket with the messages it received. */
async function open(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket; messages: any[] }> {
  const ws = new WebSocket(url, [], { headers });
  const messages: any[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_q, res) => reject(new Error(`handshake ${res.statusCode}`)));
    ws.once('error', reject);
  });
  return { ws, messages };
}

async function waitFor(messages: any[], pred: (m: any) => boolean, what: string): Promise<any> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const hit = messages.find(pred);
    if (hit !== undefined) return hit;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

forEachBackend('branch realtime', (backend: Backend) => {
  let server: TestServer;
  const sockets: WebSocket[] = [];

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    for (const s of sockets) s.terminate();
    await server?.close();
  });

  it('a subscriber on a branch gets its changes; main and the branch never see each other', async () => {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    const c: Client = p.client;
    await defineEntity(c, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
    controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    const url = `${server.url.replace('http', 'ws')}/api/realtime`;
    const base = { 'x-service-tenant': p.tenant, 'x-service-project': p.project, authorization: `Bearer ${server.adminToken}` };
    const onMain = await open(url, base);
    const onDev = await open(url, { ...base, 'x-service-branch': 'dev' });
    sockets.push(onMain.ws, onDev.ws);
    for (const s of [onMain, onDev]) {
      s.ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity: 'Order' }));
      await waitFor(s.messages, (m) => m.type === 'subscribed', 'subscribed');
    }
    const devWrite = await c.with({ branch: 'dev' }).post('/api/orders', { status: 'dev' });
    expectStatus(devWrite, 201);
    const mainWrite = await c.post('/api/orders', { status: 'main' });
    expectStatus(mainWrite, 201);
    await waitFor(onDev.messages, (m) => m.type === 'change' && m.entityId === devWrite.body.data.id, 'the dev change on dev');
    await waitFor(onMain.messages, (m) => m.type === 'change' && m.entityId === mainWrite.body.data.id, 'the main change on main');
    // Both writes were delivered in the same drain; a little longer for a stray one to show up.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(onDev.messages.filter((m) => m.type === 'change' && m.entityId === mainWrite.body.data.id).length, 0);
    assert.equal(onMain.messages.filter((m) => m.type === 'change' && m.entityId === devWrite.body.data.id).length, 0);
  });
});
