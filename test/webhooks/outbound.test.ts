/**
 * Outbound webhooks over real HTTP: endpoints CRUD, one-time secret reveal,
 * signed deliveries verified by an independent implementation (the `stripe`
 * package's webhook verifier, same `t=…,v1=…` scheme), retries with backoff,
 * dead-lettering, replay with the same event identity, secret rotation,
 * routing filters and the private-target guard.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { Client, bootstrapProject, defineEntity, errorOf, type Reply } from '../support/client.js';
import { expectStatus, type Json } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { withServices } from '../support/services.js';
import { isPrivateAddress } from '../../runtime/webhooks/outbound/url-guard.js';

const stripe = new Stripe('sk_test_x');
const DEADLINE_MS = 15_000;

interface Received { headers: IncomingHttpHeaders; raw: string; verified: boolean }

/** A loopback receiver: `/hook/<name>` answers with `plan[name](n)` for its n-th request (0-based) and records every request. */
class Receiver {
  private server: Server | null = null;
  url = '';
  readonly got = new Map<string, Received[]>();
  readonly plan = new Map<string, (n: number) => number>();
  readonly secrets = new Map<string, string>();

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const name = (req.url ?? '').split('/')[2] ?? '';
        const raw = Buffer.concat(chunks).toString('utf8');
        const list = this.got.get(name) ?? [];
        this.got.set(name, list);
        let verified = false;
        const secret = this.secrets.get(name);
        if (secret !== undefined) {
          try {
            stripe.webhooks.constructEvent(raw, String(req.headers['service-signature']), secret, 300);
            verified = true;
          } catch {
            verified = false;
          }
        }
        const status = (this.plan.get(name) ?? (() => 200))(list.length);
        list.push({ headers: req.headers, raw, verified });
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok' : 'receiver says no');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  requests(name: string): Received[] {
    return this.got.get(name) ?? [];
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

forEachBackend('outbound webhooks', (backend: Backend) => {
  let server: TestServer;
  let client: Client;
  const rx = new Receiver();
  /** Every response text the API gave, to prove no secret ever appears outside a reveal. */
  const seen: string[] = [];
  const revealed: string[] = [];

  const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const r = await client.request(method, path, body);
    if (!path.startsWith('/api/CredentialReveal/')) seen.push(r.text);
    return r;
  };

  const reveal = async (tokenId: string): Promise<string> => {
    const r = await client.post(`/api/CredentialReveal/${tokenId}/reveal`);
    expectStatus(r, 200);
    assert.equal(typeof r.body.data.secret, 'string');
    revealed.push(r.body.data.secret);
    return r.body.data.secret;
  };

  const createEndpoint = async (name: string, extra: Json = {}): Promise<{ id: string; secret: string }> => {
    const r = await call('POST', '/api/webhooks/endpoints', { url: `${rx.url}/hook/${name}`, ...extra });
    expectStatus(r, 201);
    assert.match(r.body.data.signingSecretRef, /^secret:/);
    const secret = await reveal(r.body.data.revealTokenId);
    rx.secrets.set(name, secret);
    return { id: r.body.data.id, secret };
  };

  const deliveries = async (endpointId: string): Promise<Json[]> => {
    const r = await call('GET', `/api/webhooks/endpoints/${endpointId}/deliveries`);
    expectStatus(r, 200);
    return r.body.data;
  };

  /** Waits until the endpoint has a delivery in `state` with `attempts` attempts. */
  const waitDelivery = (endpointId: string, state: string, attempts: number, seenStates?: Set<string>): Promise<Json> =>
    waitFor(`a ${state} delivery with ${attempts} attempts`, async () => {
      const ds = await deliveries(endpointId);
      for (const d of ds) seenStates?.add(d.state);
      return ds.find((d) => d.state === state && d.attempts.length === attempts);
    });

  const insert = async (collection: string, body: Json): Promise<void> => {
    expectStatus(await client.post(`/api/${collection}`, body), 201);
  };

  before(async () => {
    await rx.start();
    server = await startServer({ backend, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    client = (await bootstrapProject(server.url, server.adminToken)).client;
    for (const name of ['Widget', 'Gadget', 'Flake', 'Doom', 'Reject', 'Rotor']) {
      await defineEntity(client, { entityName: name, fields: [{ name: 'label', type: 'String', nullable: true }] });
    }
  });
  after(async () => {
    await server?.close();
    await rx.close();
  });

  it('delivers one signed { type, data } per matching event and none for non-matching ones', async () => {
    const widgets = await createEndpoint('widgets', { eventTypeFilter: 'entity.Widget.*' });
    const gadgets = await createEndpoint('gadgets', { filter: { op: 'eq', path: '$.data.entity', value: 'Gadget' } });
    await insert('widgets', { label: 'w1' });
    const d = await waitDelivery(widgets.id, 'Succeeded', 1);
    assert.deepEqual(Object.keys(d).sort(), ['attempts', 'createdAt', 'endpointId', 'eventId', 'eventType', 'id', 'nextAttemptAt', 'state', 'updatedAt']);
    assert.equal(d.endpointId, widgets.id);
    assert.equal(d.attempts[0].status, 200);
    assert.equal(typeof d.attempts[0].durationMs, 'number');

    await insert('gadgets', { label: 'g1' });
    const g = await waitDelivery(gadgets.id, 'Succeeded', 1);
    // Routing handles an event for every endpoint at once: the gadget event is routed, so its absence at `widgets` is final.
    const ws = await deliveries(widgets.id);
    assert.equal(ws.length, 1, 'the widget endpoint got no gadget delivery');
    assert.equal((await deliveries(gadgets.id)).length, 1, 'the gadget endpoint got no widget delivery');

    const reqs = rx.requests('widgets');
    assert.equal(reqs.length, 1);
    const req = reqs[0]!;
    assert.ok(req.verified, 'stripe verifies the signature');
    assert.equal(req.headers['service-event-id'], d.eventId);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    const body = JSON.parse(req.raw);
    assert.deepEqual(Object.keys(body).sort(), ['data', 'type']);
    assert.equal(body.type, 'entity.Widget.created');
    assert.equal(body.data.id, d.eventId);
    assert.equal(body.data.entity, 'Widget');
    const ev = await call('GET', `/api/events/${d.eventId}`);
    expectStatus(ev, 200);
    assert.equal(ev.body.data.type, 'entity.Widget.created');
    assert.equal(rx.requests('gadgets')[0]!.headers['service-event-id'], g.eventId);
    assert.ok(rx.requests('gadgets')[0]!.verified);
  });

  it('retries a failing receiver (RetryScheduled → Succeeded) with the attempt history', async () => {
    rx.plan.set('flaky', (n) => (n < 2 ? 500 : 200));
    const ep = await createEndpoint('flaky', { eventTypeFilter: 'entity.Flake.created', retryPolicy: { maxAttempts: 5, baseDelaySeconds: 0.4 } });
    await insert('flakes', { label: 'f' });
    const states = new Set<string>();
    const d = await waitDelivery(ep.id, 'Succeeded', 3, states);
    assert.ok(states.has('RetryScheduled'), `saw ${[...states].join(', ')}`);
    assert.deepEqual(d.attempts.map((a: Json) => a.status), [500, 500, 200]);
    assert.match(d.attempts[0].error, /HTTP 500/);
    const reqs = rx.requests('flaky');
    assert.equal(reqs.length, 3);
    assert.ok(reqs.every((r) => r.verified && r.headers['service-event-id'] === d.eventId));
  });

  it('dead-letters after maxAttempts, and at once on a permanent 4xx', async () => {
    rx.plan.set('doom', () => 503);
    rx.plan.set('reject', () => 400);
    const doom = await createEndpoint('doom', { eventTypeFilter: 'entity.Doom.created', retryPolicy: { maxAttempts: 3, baseDelaySeconds: 0.02 } });
    const reject = await createEndpoint('reject', { eventTypeFilter: 'entity.Reject.created', retryPolicy: { maxAttempts: 5, baseDelaySeconds: 0.02 } });
    await insert('dooms', { label: 'd' });
    await insert('rejects', { label: 'r' });
    const dd = await waitDelivery(doom.id, 'DeadLettered', 3);
    assert.deepEqual(dd.attempts.map((a: Json) => a.status), [503, 503, 503]);
    const rd = await waitDelivery(reject.id, 'DeadLettered', 1);
    assert.equal(rd.attempts[0].status, 400);
    assert.equal(rx.requests('reject').length, 1);

    // Replay the dead-lettered delivery once the receiver is fixed: a new attempt, same event identity.
    rx.plan.set('reject', () => 200);
    const rp = await call('POST', `/api/webhooks/deliveries/${rd.id}/replay`);
    expectStatus(rp, 202);
    assert.equal(rp.body.eventId, rd.eventId);
    assert.equal(rp.body.state, 'scheduled');
    const after1 = await waitDelivery(reject.id, 'Succeeded', 2);
    assert.equal(after1.id, rd.id);

    // And through the event log.
    const er = await call('POST', `/api/events/${rd.eventId}/replay`, { target: `webhook:${reject.id}`, reason: 'test replay' });
    expectStatus(er, 202);
    assert.equal(er.body.eventId, rd.eventId);
    assert.equal(er.body.state, 'scheduled');
    assert.equal(typeof er.body.replayId, 'string');
    await waitDelivery(reject.id, 'Succeeded', 3);
    const reqs = rx.requests('reject');
    assert.equal(reqs.length, 3);
    assert.ok(reqs.every((r) => r.verified && r.headers['service-event-id'] === rd.eventId));

    // The event replay also reaches an endpoint that never had this event.
    const er2 = await call('POST', `/api/events/${rd.eventId}/replay`, { target: `webhook:${doom.id}`, reason: 'cross' });
    expectStatus(er2, 202);
    const bad = await call('POST', `/api/events/${rd.eventId}/replay`, { target: 'mail:x', reason: 'x' });
    assert.equal(bad.status, 422);
    assert.equal(errorOf(bad).field, 'target');
  });

  it('reveals a generated secret once, never returns secrets, and rotation changes the key', async () => {
    const ep = await createEndpoint('rotor', { eventTypeFilter: 'entity.Rotor.created', description: 'rotating' });
    const again = await client.post(`/api/CredentialReveal/${'00000000-0000-4000-8000-000000000000'}/reveal`);
    assert.equal(again.status, 404);

    const rot = await call('POST', `/api/webhooks/endpoints/${ep.id}/rotate-secret`);
    expectStatus(rot, 200);
    const tokenId = rot.body.data.revealTokenId;
    const fresh = await reveal(tokenId);
    assert.notEqual(fresh, ep.secret);
    const second = await client.post(`/api/CredentialReveal/${tokenId}/reveal`);
    assert.equal(second.status, 404, 'a reveal token works once');

    rx.secrets.set('rotor', fresh);
    await insert('rotors', { label: 'r' });
    await waitDelivery(ep.id, 'Succeeded', 1);
    const req = rx.requests('rotor')[0]!;
    assert.ok(req.verified, 'the new secret verifies');
    assert.throws(() => stripe.webhooks.constructEvent(req.raw, String(req.headers['service-signature']), ep.secret, 300), 'the old secret no longer verifies');

    // A supplied secret is stored and referenced, never echoed, and no reveal token is issued.
    const supplied = 'supplied-secret-0123456789abcdef';
    const c = await call('POST', '/api/webhooks/endpoints', { url: `${rx.url}/hook/none`, signingSecret: supplied, eventTypeFilter: 'nothing.matches' });
    expectStatus(c, 201);
    assert.equal(c.body.data.revealTokenId, undefined);
    revealed.push(supplied);

    for (const text of seen) for (const s of revealed) assert.ok(!text.includes(s), 'a secret appeared in a response');
    const stored = (await server.node.services.db.query(`SELECT * FROM plinth.secrets`)).rows;
    assert.ok(stored.length >= 3);
    const dbText = JSON.stringify(stored);
    for (const s of revealed) assert.ok(!dbText.includes(s), 'secrets are stored encrypted');
  });

  it('routes an event that commits into an earlier gap of the log (out-of-order commits)', async () => {
    const ep = await createEndpoint('gap', { eventTypeFilter: 'entity.Gap.*' });
    const db = server.node.services.db;
    const scope = (await db.query<{ tenant_id: string; project_id: string }>(`SELECT tenant_id, project_id FROM plinth.webhook_endpoints WHERE id = $1`, [ep.id])).rows[0]!;
    // Reserve seqs s+1..s+10 so the outbox never takes them, then commit s+3 before s+1 (s+2 never commits).
    const s = BigInt((await db.query<{ s: string }>(`SELECT COALESCE(max(seq), 0)::text AS s FROM plinth.events`)).rows[0]!.s);
    await db.query(`SELECT setval(pg_get_serial_sequence('plinth.events', 'seq'), $1::bigint)`, [(s + 10n).toString()]);
    const put = async (seq: bigint): Promise<string> => {
      const id = randomUUID();
      await db.query(
        `INSERT INTO plinth.events (seq, id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
         VALUES ($1, $2, 'entity.Gap.created', $3, $4, 'Gap', 'gap-test', 1, now(), '{"entity":"Gap"}'::jsonb)`,
        [seq.toString(), id, scope.tenant_id, scope.project_id],
      );
      return id;
    };
    const late = await put(s + 3n);
    await waitFor('the event after the gap', async () => ((await deliveries(ep.id)).some((d) => d.eventId === late && d.state === 'Succeeded') ? true : undefined));
    const early = await put(s + 1n);
    await waitFor('the event that filled the gap', async () => ((await deliveries(ep.id)).some((d) => d.eventId === early && d.state === 'Succeeded') ? true : undefined));
    // s+2 never commits: the router steps over it after its grace, and later events still flow.
    const later = await put(s + 4n);
    await waitFor('the event after a permanent gap', async () => ((await deliveries(ep.id)).some((d) => d.eventId === later && d.state === 'Succeeded') ? true : undefined));
    await waitFor('the cursor to pass the permanent gap', async () => {
      const c = (await db.query<{ last_seq: string }>(`SELECT last_seq::text AS last_seq FROM plinth.webhook_router_cursor`)).rows[0]!;
      return BigInt(c.last_seq) >= s + 4n ? true : undefined;
    });
    const ids = rx.requests('gap').map((r) => r.headers['service-event-id']);
    assert.deepEqual([...ids].sort(), [late, early, later].sort(), 'each event delivered once');
  });

  it('a hard webhook.deliveries.monthly quota holds deliveries past its limit back (not sent, no attempt) until it is raised', async () => {
    await defineEntity(client, { entityName: 'Meter', fields: [{ name: 'label', type: 'String', nullable: true }] });
    const ep = await createEndpoint('metered', { eventTypeFilter: 'entity.Meter.created' });
    const q = await call('POST', '/api/usage/quotas', { kind: 'webhook.deliveries.monthly', limit: 2, mode: 'hard', dimensions: { eventType: 'entity.Meter.created' } });
    expectStatus(q, 201);
    for (const label of ['m1', 'm2', 'm3', 'm4']) await insert('meters', { label });
    const split = await waitFor('two sent and two held deliveries', async () => {
      const ds = await deliveries(ep.id);
      const sent = ds.filter((d) => d.state === 'Succeeded');
      const held = ds.filter((d) => d.heldReason !== undefined);
      return sent.length === 2 && held.length === 2 ? { sent, held } : undefined;
    });
    for (const d of split.held) {
      assert.equal(d.heldReason, 'Quota.WebhookDeliveriesMonthly.Exhausted');
      assert.equal(d.state, 'Pending', 'a held delivery is neither failed nor dead-lettered');
      assert.deepEqual(d.attempts, [], 'no attempt is recorded for it');
      assert.ok(Date.parse(d.nextAttemptAt) > Date.now() + 60_000, 'it waits for the window to reset');
    }
    assert.equal(rx.requests('metered').length, 2, 'nothing past the limit was sent');
    const summary = await call('GET', '/api/usage/summary');
    expectStatus(summary, 200);
    assert.equal(summary.body.data.find((x: Json) => x.quotaId === q.body.data.id).used, 2);

    // Raising the limit lets the held deliveries go at once.
    expectStatus(await call('PATCH', `/api/usage/quotas/${q.body.data.id}`, { limit: 4 }), 200);
    await waitFor('all four delivered', async () => {
      const ds = await deliveries(ep.id);
      return ds.length === 4 && ds.every((d) => d.state === 'Succeeded' && d.attempts.length === 1 && d.heldReason === undefined) ? ds : undefined;
    });
    assert.equal(rx.requests('metered').length, 4);
    assert.ok(rx.requests('metered').every((r) => r.verified));
    expectStatus(await call('DELETE', `/api/usage/quotas/${q.body.data.id}`), 204);
  });

  it('manages endpoints: list, read, patch, put, delete, validation', async () => {
    const c = await call('POST', '/api/webhooks/endpoints', { url: `${rx.url}/hook/crud`, eventTypeFilter: 'nothing.*' });
    expectStatus(c, 201);
    const id = c.body.data.id;
    assert.deepEqual(c.body.data.retryPolicy, { maxAttempts: 10, baseDelaySeconds: 1 });
    const l = await call('GET', '/api/webhooks/endpoints');
    expectStatus(l, 200);
    assert.ok(l.body.data.some((e: Json) => e.id === id));
    const p = await call('PATCH', `/api/webhooks/endpoints/${id}`, { description: 'patched', retryPolicy: { maxAttempts: 2 } });
    expectStatus(p, 200);
    assert.equal(p.body.data.description, 'patched');
    assert.equal(p.body.data.eventTypeFilter, 'nothing.*');
    assert.deepEqual(p.body.data.retryPolicy, { maxAttempts: 2, baseDelaySeconds: 1 });
    const u = await call('PUT', `/api/webhooks/endpoints/${id}`, { url: `${rx.url}/hook/crud2` });
    expectStatus(u, 200);
    assert.equal(u.body.data.description, null);
    assert.equal(u.body.data.eventTypeFilter, null);
    const alias = await call('GET', `/api/Webhook/endpoints/${id}`);
    expectStatus(alias, 200);
    assert.equal(alias.body.data.url, `${rx.url}/hook/crud2`);
    for (const [body, field] of [
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ url: `${rx.url}/x`, retryPolicy: { maxAttempts: 0 } }, 'retryPolicy.maxAttempts'],
      [{ url: `${rx.url}/x`, filter: { op: 'regex', path: '$.type', value: 'x' } }, 'filter.op'],
      [{ url: `${rx.url}/x`, filter: { op: 'eq', path: 'type', value: 'x' } }, 'filter.path'],
    ] as const) {
      const r = await call('POST', '/api/webhooks/endpoints', body);
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal(errorOf(r).field, field);
    }
    expectStatus(await call('DELETE', `/api/webhooks/endpoints/${id}`), 204);
    assert.equal((await call('GET', `/api/webhooks/endpoints/${id}`)).status, 404);
    const recent = await call('GET', '/api/webhooks/deliveries?pageSize=100');
    expectStatus(recent, 200);
    assert.ok(recent.body.data.length >= 5);
  });
});

describe('outbound webhook target guard', () => {
  it('classifies private, loopback, link-local and mapped addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '[::1]']) {
      assert.equal(isPrivateAddress(a), true, a);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
  });

  it('refuses private targets with 422 Webhook.PrivateTarget unless the operator allows them', async () => {
    const server = await startServer({ backend: 'pglite' });
    try {
      const { client } = await bootstrapProject(server.url, server.adminToken);
      for (const url of ['http://127.0.0.1:9/x', 'http://localhost:9/x', 'http://[::1]:9/x', 'http://[::ffff:127.0.0.1]/x', 'http://0.0.0.0/x', 'http://169.254.169.254/latest']) {
        const r = await client.post('/api/webhooks/endpoints', { url });
        assert.equal(r.status, 422, url);
        assert.equal(errorOf(r).reasonCode, 'Webhook.PrivateTarget', url);
      }
    } finally {
      await server.close();
    }
  });
});

withServices('outbound webhooks: two nodes on one database [postgres]', ['postgres'], () => {
  describe('outbound webhooks: two nodes on one database [postgres]', () => {
    it('routes and sends each (endpoint, event) once across nodes', async () => {
      const rx = new Receiver();
      await rx.start();
      const a = await startServer({ backend: 'postgres', env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
      const b = await startServer({ reuse: { dataDir: 'memory:', databaseUrl: a.databaseUrl }, backend: 'postgres', env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
      try {
        const { client, tenant, project } = await bootstrapProject(a.url, a.adminToken);
        const clientB = new Client(b.url, { token: b.adminToken, tenant, project });
        await defineEntity(client, { entityName: 'Ping', fields: [{ name: 'n', type: 'Int', nullable: false }] });
        const ep = await client.post('/api/webhooks/endpoints', { url: `${rx.url}/hook/pings`, eventTypeFilter: 'entity.Ping.created' });
        expectStatus(ep, 201);
        const N = 30;
        await Promise.all(Array.from({ length: N }, (_, n) => (n % 2 === 0 ? client : clientB).post('/api/pings', { n }).then((r) => expectStatus(r, 201))));
        const ds = await waitFor('every delivery succeeded', async () => {
          const r = await client.get(`/api/webhooks/endpoints/${ep.body.data.id}/deliveries?pageSize=200`);
          const list = r.body.data as Json[];
          return list.length === N && list.every((d) => d.state === 'Succeeded') ? list : undefined;
        });
        assert.ok(ds.every((d) => d.attempts.length === 1));
        const ids = rx.requests('pings').map((r) => r.headers['service-event-id']);
        assert.equal(ids.length, N);
        assert.equal(new Set(ids).size, N, 'no event was sent twice');
      } finally {
        await b.stop();
        await a.close();
        await rx.close();
      }
    });
  });
});
