/**
 * Usage rollups over a real node: GET /api/Usage/{projectId}/rollups totals
 * equal the events before and after the BillingDrainRollup operator ran (and
 * a second run adds nothing); a realtime subscription and each webhook
 * delivery attempt are metered; rolled-up events expire by the
 * BillingDrainMetering retention rule, those after the rollup's mark never.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const WAIT_MS = 10_000;
const WINDOWS = ['hour', 'day', 'calendar-month'] as const;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Opens a WebSocket, sends one subscribe and resolves with the reply. */
async function subscribeOnce(url: string, headers: Record<string, string>, entity: string): Promise<{ reply: Json; ws: WebSocket }> {
  const ws = new WebSocket(url, [], { headers });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const reply = await new Promise<Json>((resolve) => {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Json;
      if ((m.type === 'subscribed' || m.type === 'error') && m.id === 's') resolve(m);
    });
    ws.send(JSON.stringify({ type: 'subscribe', id: 's', entity }));
  });
  return { reply, ws };
}

forEachBackend('usage rollups', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let tenantId: string;
  let rollupsPath: string;
  let receiver: Server;
  let received = 0;
  const sockets: WebSocket[] = [];

  const db = () => server.node.services.db;
  const events = async (): Promise<Json[]> => {
    await server.node.services.audit.flush();
    await server.node.services.usage!.flush();
    const r = await admin.get(`/api/Usage/${projectId}/events?pageSize=200`);
    expectStatus(r, 200);
    return r.body.data as Json[];
  };
  /** Expected rollup rows computed from the events: kind|windowStart → quantity. */
  const expectedRollups = (evs: Json[], window: (typeof WINDOWS)[number]): Map<string, number> => {
    const out = new Map<string, number>();
    for (const e of evs) {
      const at = new Date(e.at as string);
      const start = window === 'hour'
        ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours())
        : window === 'day' ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) : Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
      const key = `${e.kind as string}|${new Date(start).toISOString()}`;
      out.set(key, (out.get(key) ?? 0) + (e.quantity as number));
    }
    return out;
  };
  const rollups = async (window: string, extra = ''): Promise<Map<string, number>> => {
    const r = await admin.get(`${rollupsPath}?window=${window}${extra}`);
    expectStatus(r, 200);
    const out = new Map<string, number>();
    for (const row of r.body.data as Json[]) {
      assert.deepEqual(Object.keys(row).sort(), ['kind', 'quantity', 'window', 'windowStart']);
      assert.equal(row.window, window);
      const key = `${row.kind as string}|${row.windowStart as string}`;
      assert.ok(!out.has(key), `one row per kind and window start: ${key}`);
      out.set(key, row.quantity as number);
    }
    return out;
  };
  const assertRollupsEqualEvents = async (): Promise<void> => {
    const evs = await events();
    for (const w of WINDOWS) assert.deepEqual(await rollups(w), expectedRollups(evs, w), `window ${w}`);
  };

  before(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // The operator's own timer is out of the way: the test runs it when it wants to.
    server = await startServer({ backend, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', USAGE_ROLLUP_INTERVAL_MS: '3600000' } });
    const p = await bootstrapProject(server.url, server.adminToken, `r${randomUUID().slice(0, 8)}`);
    admin = p.client;
    projectId = p.projectId;
    tenantId = p.tenantId;
    rollupsPath = `/api/Usage/${projectId}/rollups`;
    await defineEntity(admin, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
  });
  after(async () => {
    for (const ws of sockets) ws.terminate();
    await server?.close();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
  });

  it('meters an opened realtime subscription as 1 realtime.subscriptions; a refused one counts nothing', async () => {
    const url = `${server.url.replace('http', 'ws')}/api/realtime`;
    const headers = { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': admin.scope.tenant!, 'x-service-project': admin.scope.project! };
    const ok = await subscribeOnce(url, headers, 'Doc');
    sockets.push(ok.ws);
    assert.equal(ok.reply.type, 'subscribed');
    const bad = await subscribeOnce(url, headers, 'Nope');
    sockets.push(bad.ws);
    assert.equal(bad.reply.type, 'error');
    // An SSE subscription counts the same; one refused (unknown entity) does not.
    const sseAbort = new AbortController();
    const sse = await fetch(`${server.url}/api/realtime/sse?entity=Doc`, { headers, signal: sseAbort.signal });
    assert.equal(sse.status, 200);
    const badSse = await fetch(`${server.url}/api/realtime/sse?entity=Nope`, { headers });
    assert.equal(badSse.status, 404);
    await badSse.text();
    const subs = await waitFor('the subscription events', async () => {
      const e = (await events()).filter((x) => x.kind === 'realtime.subscriptions');
      return e.length >= 2 ? e : undefined;
    });
    sseAbort.abort();
    assert.deepEqual(subs.map((e) => [e.operationId, e.quantity]).sort(), [['Realtime.Sse', 1], ['Realtime.Subscribe', 1]]);
  });

  it('meters each webhook delivery attempt that is made as 1 webhook.deliveries.monthly', async () => {
    const ep = await admin.post('/api/webhooks/endpoints', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
    expectStatus(ep, 201);
    const created = await admin.post('/api/docs', { title: 'hooked' });
    expectStatus(created, 201);
    await waitFor('the delivery', async () => (received >= 1 ? true : undefined));
    const deliveries = await waitFor('the delivery event', async () => {
      const e = (await events()).filter((x) => x.kind === 'webhook.deliveries.monthly');
      return e.length >= received ? e : undefined;
    });
    assert.equal(deliveries.length, received);
    assert.equal(deliveries[0]!.quantity, 1);
    assert.equal(deliveries[0]!.operationId, 'Webhook.Delivery');
    // The event's correlation id is the write's that caused it.
    assert.equal(deliveries[0]!.correlationId, created.headers.get('x-service-correlation-id'));
    assert.deepEqual(deliveries[0]!.dimensions, { eventType: 'entity.Doc.created' });
    // No more deliveries from here on: the next tests compare totals and want no background events.
    expectStatus(await admin.delete(`/api/webhooks/endpoints/${ep.body.data.id as string}`), 204);
  });

  it('rollups equal the events before the operator ran, after it, and after a second run', async () => {
    for (let i = 0; i < 3; i++) expectStatus(await admin.post('/api/docs', { title: `d${i}` }), 201);
    expectStatus(await admin.post('/api/docs/batch', { items: [1, 2, 3, 4, 5].map((n) => ({ title: `b${n}` })) }), 201);
    for (let i = 0; i < 2; i++) expectStatus(await admin.get('/api/docs'), 200);
    // Before BillingDrainRollup ran: the open tail is computed from the events.
    await assertRollupsEqualEvents();
    const evs = await events();
    const first = await server.node.usageRollup.rollUpNow();
    assert.ok(first.rolled >= evs.length, `rolled ${first.rolled} of ${evs.length}`);
    const unrolled = await db().query<{ n: string }>(`SELECT count(*)::text AS n FROM plinth.usage_ledger l, plinth.usage_rollup_cursor m WHERE m.id = 1 AND l.project_id = $1 AND ((l.src = 'e' AND l.id > m.last_id) OR (l.src = 'a' AND l.id > m.last_audit_seq))`, [projectId]);
    assert.equal(Number(unrolled.rows[0]!.n), 0);
    await assertRollupsEqualEvents();
    // Idempotent: a second run finds nothing and the totals do not move.
    const second = await server.node.usageRollup.rollUpNow();
    assert.equal(second.rolled, 0);
    await assertRollupsEqualEvents();
    // New events after a run: rolled rows plus the tail still add up.
    expectStatus(await admin.get('/api/docs/count'), 200);
    await assertRollupsEqualEvents();
    // The stored rollups themselves (no tail) match once rolled.
    await server.node.usageRollup.rollUpNow();
    const stored = await db().query<{ kind: string; q: string }>(
      `SELECT kind, sum(quantity)::text AS q FROM plinth.usage_rollups WHERE project_id = $1 AND time_window = 'calendar-month' GROUP BY kind ORDER BY kind`, [projectId],
    );
    const byKind = new Map<string, number>();
    for (const e of await events()) byKind.set(e.kind as string, (byKind.get(e.kind as string) ?? 0) + (e.quantity as number));
    assert.deepEqual(new Map(stored.rows.map((r) => [r.kind, Number(r.q)])), byKind);
    assert.equal(byKind.get('write.monthly'), 1 + 3 + 5);
    assert.equal(byKind.get('read.monthly'), 3);
    assert.equal(server.node.retention.system.stats().byKind.BillingDrainRollup, 1, 'one activation of the operator');
  });

  it('filters rollups by kind and answers through /api/usage/rollups with scope headers', async () => {
    const writes = await rollups('day', '&kind=write.monthly');
    assert.ok(writes.size >= 1);
    for (const k of writes.keys()) assert.ok(k.startsWith('write.monthly|'));
    const scoped = await admin.get('/api/usage/rollups?window=day');
    expectStatus(scoped, 200);
    const direct = await admin.get(`${rollupsPath}?window=day`);
    assert.deepEqual(scoped.body.data, direct.body.data);
    // Default window: calendar-month.
    const dflt = await admin.get(rollupsPath);
    expectStatus(dflt, 200);
    assert.ok((dflt.body.data as Json[]).every((r) => r.window === 'calendar-month'));
  });

  it('refuses an unknown window or a bad kind with 422 naming the field', async () => {
    expectError(await admin.get(`${rollupsPath}?window=week`), 422, 'VALIDATION_FAILED', 'Usage.InvalidWindow', 'window');
    expectError(await admin.get(`${rollupsPath}?window=day&kind=%20`), 422, 'VALIDATION_FAILED', 'Usage.InvalidKind', 'kind');
    expectError(await admin.get(`${rollupsPath}?from=nope`), 422, 'VALIDATION_FAILED', 'Usage.InvalidInstant', 'from');
  });

  it('expires old events only once rolled up (BillingDrainMetering), and the rollups keep their totals', async () => {
    const insert = (correlationId: string) => db().query(
      `INSERT INTO plinth.usage_events (tenant_id, project_id, kind, quantity, at, operation_id, correlation_id)
       VALUES ($1, $2, 'read.monthly', 7, now() - interval '120 days', 'Entity.Doc.List', $3)`,
      [tenantId, projectId, correlationId],
    );
    const count = async (c: string): Promise<number> =>
      Number((await db().query<{ n: string }>(`SELECT count(*)::text AS n FROM plinth.usage_events WHERE correlation_id = $1`, [c])).rows[0]!.n);
    await insert('old-rolled');
    await server.node.usageRollup.rollUpNow();
    await insert('old-pending');
    const before = await rollups('calendar-month', '&kind=read.monthly');
    const swept = await server.node.retention.sweepNow();
    const usageRule = swept.BillingDrainMetering.find((r) => r.rule === 'usage events');
    assert.equal(usageRule?.deleted, 1, JSON.stringify(swept.BillingDrainMetering));
    assert.equal(await count('old-rolled'), 0);
    assert.equal(await count('old-pending'), 1, 'an event the rollup has not reached is never swept');
    // The old month shows 14 units before and after the rolled event itself is gone: its rollup keeps them.
    const after = await rollups('calendar-month', '&kind=read.monthly');
    assert.deepEqual(after, before);
    const thisMonth = `|${new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString()}`;
    assert.deepEqual([...after.entries()].filter(([k]) => !k.endsWith(thisMonth)).map(([, v]) => v), [14]);
    // Once rolled up, it goes too, and the totals still stand.
    await server.node.usageRollup.rollUpNow();
    await server.node.retention.sweepNow();
    assert.equal(await count('old-pending'), 0);
    assert.deepEqual(await rollups('calendar-month', '&kind=read.monthly'), before);
  });

  it('keeps an audit row that carries usage as long as usage events are kept, and until rolled up', async () => {
    const insert = (correlationId: string, days: number, usage: boolean) => db().query(
      `INSERT INTO plinth.audit (at, correlation_id, tenant_id, project_id, actor, operation_id, decision, reason_code, status, usage_kind, usage_quantity)
       VALUES (now() - ($3::int * interval '1 day'), $1, $2, $4, 'admin', 'Entity.Doc.List', 'Allow', 'Access.Allowed', 200, $5, $6)`,
      [correlationId, tenantId, days, projectId, usage ? 'read.monthly' : null, usage ? 5 : null],
    );
    const present = async (c: string): Promise<boolean> =>
      (await db().query(`SELECT 1 FROM plinth.audit WHERE correlation_id = $1`, [c])).rows.length === 1;
    const tag = randomUUID();
    await insert(`${tag}-plain-40d`, 40, false); // past audit retention (30 days): goes
    await insert(`${tag}-usage-40d`, 40, true); // a usage event younger than usage retention (90 days): stays
    await insert(`${tag}-usage-120d`, 120, true); // past both, but after the rollup's mark: stays until rolled up
    await server.node.retention.sweepNow();
    assert.deepEqual(await Promise.all(['plain-40d', 'usage-40d', 'usage-120d'].map((n) => present(`${tag}-${n}`))), [false, true, true]);
    await server.node.usageRollup.rollUpNow();
    await server.node.retention.sweepNow();
    assert.deepEqual(await Promise.all(['usage-40d', 'usage-120d'].map((n) => present(`${tag}-${n}`))), [true, false]);
    // Its units stay in the rollup of its month.
    const month = new Date(Date.now() - 120 * 86_400_000);
    const key = `read.monthly|${new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1)).toISOString()}`;
    assert.ok(((await rollups('calendar-month', '&kind=read.monthly')).get(key) ?? 0) >= 5, key);
  });
});
