/**
 * Outbound webhooks in cluster mode (NATS + shared PostgreSQL, real node
 * processes): writes on either node reach the receiver once each, and a node
 * killed in the middle of a send leaves the delivery to another node once its
 * claim lease runs out — one recorded attempt, same event id.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { bootstrapProject, Client, defineEntity } from '../support/client.js';
import { NatsCluster } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

const stripe = new Stripe('sk_test_x');
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_CLAIM_LEASE_MS: '3000' };

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 40_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('outbound webhooks in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let nats: NatsCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: PlinthProcess;
  let b: PlinthProcess;
  const token = 'cluster-webhooks-admin-token-0123456789';
  const got: Array<{ path: string; headers: IncomingHttpHeaders; raw: string }> = [];
  const held: ServerResponse[] = [];
  let hangNext = false;
  const rx = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      if (hangNext && req.url === '/hook/hang') {
        hangNext = false;
        held.push(res); // never answered: the sender dies first
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  let rxUrl = '';

  before(async () => {
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    rxUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}`;
    nats = await NatsCluster.start(3);
    db = await createTestDatabase();
    [a, b] = await Promise.all(['wh-a', 'wh-b'].map((nodeId) => startPlinthProcess({ databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId, env: ENV })));
  });
  after(async () => {
    for (const res of held) res.destroy();
    rx.closeAllConnections();
    rx.close();
    await reapPlinthProcesses();
    await nats?.stop();
    await db?.drop();
  });

  it('delivers writes from both nodes once each, and survives a node killed mid-send', async () => {
    const { client, tenant, project } = await bootstrapProject(a.url, token);
    const onB = new Client(b.url, { token, tenant, project });
    await defineEntity(client, { entityName: 'Ping', fields: [{ name: 'n', type: 'Int', nullable: false }] });
    await defineEntity(client, { entityName: 'Hang', fields: [{ name: 'n', type: 'Int', nullable: false }] });
    const ep = await client.post('/api/webhooks/endpoints', { url: `${rxUrl}/hook/pings`, eventTypeFilter: 'entity.Ping.created' });
    assert.equal(ep.status, 201, ep.text);
    const secret = (await client.post(`/api/CredentialReveal/${ep.body.data.revealTokenId}/reveal`)).body.data.secret as string;
    const N = 10;
    const writes = await Promise.all(Array.from({ length: N }, (_, n) => (n % 2 === 0 ? client : onB).post('/api/pings', { n })));
    for (const w of writes) assert.equal(w.status, 201, w.text);
    const ds = await waitFor('every ping delivered', async () => {
      const r = await onB.get(`/api/webhooks/endpoints/${ep.body.data.id}/deliveries?pageSize=100`);
      return r.body.data.length === N && r.body.data.every((d: { state: string }) => d.state === 'Succeeded') ? r.body.data : undefined;
    });
    assert.ok(ds.every((d: { attempts: unknown[] }) => d.attempts.length === 1));
    const pings = got.filter((g) => g.path === '/hook/pings');
    assert.equal(pings.length, N);
    assert.equal(new Set(pings.map((p) => p.headers['service-event-id'])).size, N);
    for (const p of pings) stripe.webhooks.constructEvent(p.raw, String(p.headers['service-signature']), secret, 300);

    // Only A runs; its send hangs at the receiver; A dies; C takes the delivery over after the lease.
    await b.kill9();
    const hang = await client.post('/api/webhooks/endpoints', { url: `${rxUrl}/hook/hang`, eventTypeFilter: 'entity.Hang.created' });
    assert.equal(hang.status, 201, hang.text);
    hangNext = true;
    assert.equal((await client.post('/api/hangs', { n: 1 })).status, 201);
    await waitFor('the first send to reach the receiver', async () => (held.length === 1 ? true : undefined));
    // Killed well within its 2 s request timeout, so A never records the attempt.
    await a.kill9();
    const c = await startPlinthProcess({ databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken: token, nodeId: 'wh-c', env: ENV });
    const onC = new Client(c.url, { token, tenant, project });
    const d = await waitFor('the delivery to succeed on another node', async () => {
      const r = await onC.get(`/api/webhooks/endpoints/${hang.body.data.id}/deliveries`);
      return r.body.data?.[0]?.state === 'Succeeded' ? r.body.data[0] : undefined;
    });
    assert.equal(d.attempts.length, 1, 'the dead node recorded nothing; the new owner recorded one attempt');
    const hangs = got.filter((g) => g.path === '/hook/hang');
    assert.equal(hangs.length, 2);
    assert.ok(hangs.every((h) => h.headers['service-event-id'] === d.eventId));
  });
});
