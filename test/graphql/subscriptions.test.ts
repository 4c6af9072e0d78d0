/**
 * GraphQL subscriptions over graphql-ws on `/graphql` (CONTRACT: GraphQL
 * subscriptions), with graphql-ws's own client over real sockets: changes
 * (names only) for rows matching the filter, authentication in
 * `connection_init` or the upgrade, REST's authority, the realtime quota,
 * and the protocol's close codes for clients that break it.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createClient, type Client as WsClient, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const WAIT_MS = 10_000;
const ORDER = {
  entityName: 'Order',
  fields: [
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] },
    { name: 'note', type: 'String', nullable: true },
  ],
};
const CHANGES = 'subscription S($f: OrderFilter) { orderChanged(filter: $f) { kind entityId changedFields } }';

/** `p`, or a failure naming what did not happen within WAIT_MS. */
function within<T>(p: Promise<T>, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS).unref())]);
}

/** One subscription's messages: results, then its end (an error or a complete). */
class Feed {
  readonly results: FormattedExecutionResult[] = [];
  error: unknown = null;
  completed = false;
  private wake: Array<() => void> = [];
  readonly dispose: () => void;

  constructor(client: WsClient, query: string, variables: Record<string, unknown> = {}) {
    this.dispose = client.subscribe({ query, variables }, {
      next: (r) => this.push(() => this.results.push(r as FormattedExecutionResult)),
      error: (e) => this.push(() => { this.error = e; }),
      complete: () => this.push(() => { this.completed = true; }),
    });
  }

  private push(change: () => void): void {
    change();
    for (const w of this.wake.splice(0)) w();
  }

  async until<T>(probe: () => T | undefined | false, what: string, waitMs = WAIT_MS): Promise<T> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const hit = probe();
      if (hit !== undefined && hit !== false) return hit;
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify({ results: this.results, error: this.error, completed: this.completed })}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  change(kind: string, entityId: string): Promise<any> {
    return this.until(() => this.results.map((r) => (r.data as any)?.orderChanged ?? (r.data as any)?.c).find((c) => c?.kind === kind && c.entityId === entityId), `${kind} ${entityId}`);
  }

  /** The `error` message's errors (graphql-ws hands them to the sink as an array). */
  errors(): Promise<Array<{ message: string; extensions: Record<string, unknown> }>> {
    return this.until(() => (Array.isArray(this.error) ? this.error : undefined), 'an error message');
  }
}

forEachBackend('GraphQL subscriptions (graphql-ws)', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let projectId: string;
  let wsUrl: string;
  const clients: WsClient[] = [];

  /** graphql-ws's client; `closed` resolves with the socket's close code. */
  function connect(params: Record<string, unknown> | undefined, opts: { headers?: Record<string, string>; path?: string; lazy?: boolean } = {}): { client: WsClient; closed: Promise<number> } {
    let onClosed!: (code: number) => void;
    const closed = new Promise<number>((r) => { onClosed = r; });
    class HeaderSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: opts.headers ?? {} });
      }
    }
    const client = createClient({
      // lazy (the default here): connect on the first operation and close after the last one.
      url: wsUrl + (opts.path ?? '/graphql'), webSocketImpl: HeaderSocket, retryAttempts: 0, lazy: opts.lazy ?? true,
      // A non-lazy client reports the close it was expecting on the console otherwise; `closed` is what the tests read.
      onNonLazyError: () => {},
      ...(params === undefined ? {} : { connectionParams: params }),
      on: { closed: (e) => onClosed((e as { code: number }).code) },
    });
    clients.push(client);
    return { client, closed };
  }

  /**
   * Resolves once every feed is attached: subscribing is asynchronous, so
   * probe rows are written until each feed has announced one.
   */
  async function live(api: Client, ...feeds: Feed[]): Promise<void> {
    // A probe written before a feed attached is never seen by it: write another soon rather than wait out WAIT_MS.
    const probeWaitMs = 500;
    for (let i = 0; ; i++) {
      const probe = await api.post('/api/orders', { total: '0', status: 'paid' });
      expectStatus(probe, 201);
      try {
        for (const f of feeds) await f.until(() => f.results.some((r) => Object.values(r.data ?? {}).some((c: any) => c?.entityId === probe.body.data.id)) || f.error !== null, 'a probe change', probeWaitMs);
        return;
      } catch (err) {
        if (i >= WAIT_MS / probeWaitMs) throw err;
      }
    }
  }

  const adminParams = () => ({ authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': tenant, 'x-service-project': 'app' });

  async function registerUser(): Promise<{ token: string; sessionId: string }> {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    return { token: login.body.accessToken as string, sessionId: login.body.sessionId as string };
  }

  /** A raw socket speaking the protocol by hand: for clients that break it. */
  function raw(protocol = 'graphql-transport-ws'): Promise<{ ws: WebSocket; messages: any[]; closed: Promise<{ code: number; reason: string }> }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${wsUrl}/graphql`, protocol);
      const messages: any[] = [];
      const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
      ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
      ws.on('open', () => resolve({ ws, messages, closed }));
      ws.on('error', reject);
    });
  }

  before(async () => {
    server = await startServer({ backend });
    wsUrl = server.url.replace('http', 'ws');
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    tenant = p.tenant;
    projectId = p.projectId;
    await defineEntity(admin, ORDER);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await server.close();
  });

  it('delivers CREATED, UPDATED and DELETED changes (names only) for rows matching the filter, nothing for others', async () => {
    const { client } = connect(adminParams());
    const paid = new Feed(client, CHANGES, { f: { status: { eq: 'PAID' } } });
    const all = new Feed(client, 'subscription { c: orderChanged { kind entityId } }');
    await live(admin, paid, all);

    const pending = await admin.post('/api/orders', { total: '2', status: 'pending' });
    const hit = await admin.post('/api/orders', { total: '3', status: 'paid', note: 'secret words' });
    const created = await paid.change('CREATED', hit.body.data.id);
    assert.deepEqual(Object.keys(created).sort(), ['changedFields', 'entityId', 'kind']);
    assert.ok(!JSON.stringify(paid.results).includes('secret words'), 'names only, never values');
    expectStatus(await admin.patch(`/api/orders/${hit.body.data.id}`, { note: 'x' }), 200);
    const updated = await paid.change('UPDATED', hit.body.data.id);
    assert.deepEqual(updated.changedFields, ['note']);
    expectStatus(await admin.delete(`/api/orders/${hit.body.data.id}`), 204);
    await paid.change('DELETED', hit.body.data.id);
    await all.change('CREATED', pending.body.data.id);
    assert.equal(paid.results.some((r) => (r.data as any).orderChanged.entityId === pending.body.data.id), false, 'a row outside the filter is never announced');
    // complete ends one subscription; the other keeps receiving.
    paid.dispose();
    const later = await admin.post('/api/orders', { total: '4', status: 'paid' });
    await all.change('CREATED', later.body.data.id);
    assert.equal(paid.results.some((r) => (r.data as any).orderChanged.entityId === later.body.data.id), false);
  });

  it('takes the credential from the upgrade headers too, and answers a query and a mutation on the socket like POST /graphql', async () => {
    const { client } = connect(undefined, { headers: { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': tenant, 'x-service-project': 'app' }, path: '/v1/graphql' });
    const q = new Feed(client, 'mutation { createOrder(input: { total: "5", status: PENDING }) { id status } }');
    await q.until(() => q.completed, 'the mutation to complete');
    const created = (q.results[0]!.data as any).createOrder;
    assert.equal(created.status, 'PENDING');
    const read = new Feed(client, 'query($id: ID!) { order(id: $id) { id total } }', { id: created.id });
    await read.until(() => read.completed, 'the query to complete');
    assert.deepEqual(read.results.map((r) => r.data), [{ order: { id: created.id, total: '5' } }]);
  });

  it('a missing, invalid or other-project credential in connection_init closes with 4403; a bad one in the upgrade is refused with HTTP 401', async () => {
    for (const params of [{}, { authorization: 'Bearer nope', 'x-service-tenant': tenant, 'x-service-project': 'app' }, { ...adminParams(), 'x-service-project': 'missing' }]) {
      const { client, closed } = connect(params);
      const f = new Feed(client, CHANGES);
      assert.equal(await closed, 4403, JSON.stringify(params));
      await f.until(() => f.error !== null, 'the sink to see the close');
    }
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${wsUrl}/graphql`, 'graphql-transport-ws', { headers: { authorization: 'Bearer nope', 'x-service-tenant': tenant, 'x-service-project': 'app' } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => { ws.terminate(); reject(new Error('upgraded with a bad credential')); });
      ws.on('error', () => {});
    });
    assert.equal(status, 401);
  });

  it('authority is REST\'s: without entity:Order:read the subscription ends with an error message carrying ACCESS_DENIED; a revoked grant (4403) and a revoked session (4401) end the connection', async () => {
    const { token, sessionId } = await registerUser();
    const params = { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'x-service-project': 'app' };
    // Not lazy: the connection stays open between operations, so what closes it is the server.
    const first = connect(params, { lazy: false });
    const denied = new Feed(first.client, CHANGES);
    const [e] = await denied.errors();
    assert.deepEqual([e!.extensions.code, e!.extensions.reasonCode], ['ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing']);
    assert.equal(typeof e!.extensions.correlationId, 'string');
    // Granted, the same connection subscribes (authority is checked per subscribe).
    const grant = await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read' });
    expectStatus(grant, 201);
    const ok = new Feed(first.client, CHANGES);
    await live(admin, ok);
    assert.equal(ok.error, null);
    // Revoking a grant ends the connection (4403, as on /api/realtime): its subscriptions were authorized under it.
    expectStatus(await admin.delete(`/api/projects/${projectId}/capability-grants/${grant.body.data.grantId}`), 204);
    assert.equal(await within(first.closed, 'the grant revocation to close the connection'), 4403);
    // Granted again, on a new connection; revoking the session ends it (4401, as on /api/realtime).
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'entity:Order:read' }), 201);
    const again = connect(params);
    const more = new Feed(again.client, CHANGES);
    await live(admin, more);
    expectStatus(await admin.delete(`/api/identity/sessions/${sessionId}`), 204);
    assert.equal(await within(again.closed, 'the session revocation to close the connection'), 4401);
  });

  it('bad input: a bad filter, an unknown field and a query over the limits end with an error message (VALIDATION_FAILED), the connection stays usable', async () => {
    const { client } = connect(adminParams());
    for (const [query, variables] of [
      ['subscription { orderChanged(filter: { note: { like: 5 } }) { kind } }', {}],
      ['subscription { orderChanged { kind nope } }', {}],
      [CHANGES, { f: { status: { eq: 'UNKNOWN' } } }],
      ['subscription { orderChanged(filter: { note: { in: [] } }) { kind } }', {}],
      ['subscription { a: orderChanged { kind } b: orderChanged { kind } }', {}],
      ['subscription {', {}],
    ] as const) {
      const f = new Feed(client, query, variables);
      const [e] = await f.errors();
      assert.equal(e!.extensions.code, 'VALIDATION_FAILED', `${query}: ${JSON.stringify(e)}`);
      assert.equal(typeof e!.extensions.reasonCode, 'string');
      assert.equal(typeof e!.extensions.correlationId, 'string');
    }
    const still = new Feed(client, 'query { orders(first: 1) { totalCount } }');
    await still.until(() => still.completed, 'the connection to still answer');
    assert.equal(still.error, null);
  });

  it('protocol violations get graphql-ws close codes, never a crash: garbage 4400, subscribe before init 4401, a second init 4429, silence 4408, wrong subprotocol 4406, an oversize message cut', async () => {
    const garbage = await raw();
    garbage.ws.send('not json');
    assert.equal((await garbage.closed).code, 4400);

    const early = await raw();
    early.ws.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { query: CHANGES } }));
    assert.equal((await early.closed).code, 4401);

    const twice = await raw();
    twice.ws.send(JSON.stringify({ type: 'connection_init', payload: adminParams() }));
    twice.ws.send(JSON.stringify({ type: 'connection_init', payload: adminParams() }));
    assert.equal((await twice.closed).code, 4429);

    const silent = await raw();
    assert.equal((await silent.closed).code, 4408);

    const wrong = await raw('graphql-ws');
    assert.equal((await wrong.closed).code, 4406);

    // An unknown message type and a subscribe without an id are malformed too.
    for (const m of [{ type: 'start', id: '1' }, { type: 'subscribe', payload: { query: CHANGES } }, [1, 2], 'x']) {
      const s = await raw();
      s.ws.send(JSON.stringify({ type: 'connection_init', payload: adminParams() }));
      await new Promise((r) => setTimeout(r, 100));
      s.ws.send(JSON.stringify(m));
      assert.equal((await s.closed).code, 4400, JSON.stringify(m));
    }
    // A message over the REST body limit (MAX_BODY_BYTES, 10 MiB by default) is refused by uWS before it is read:
    // the connection is cut (1009, or 1006 when uWS drops it without a close frame).
    const big = await raw();
    big.ws.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(10 * 1024 * 1024) } }));
    const cut = (await big.closed).code;
    assert.ok(cut === 1009 || cut === 1006, `closed with ${cut}`);

    // The server still serves.
    expectStatus(await admin.get('/api/orders?pageSize=1'), 200);
  });

  it('the realtime quota applies: a hard realtime.subscriptions quota refuses the next subscribe with QUOTA_EXCEEDED, and a full project closes connection_init with 4429', async () => {
    const p = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(p.client, ORDER);
    expectStatus(await admin.post(`/api/Usage/${p.projectId}/quotas`, { kind: 'realtime.subscriptions', limit: 1, mode: 'hard' }), 201);
    const params = { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': p.tenant, 'x-service-project': 'app' };
    const { client } = connect(params);
    const first = new Feed(client, CHANGES);
    await live(p.client, first);
    assert.equal(first.error, null);
    const second = new Feed(client, CHANGES);
    const [e] = await second.errors();
    assert.deepEqual([e!.extensions.code, e!.extensions.reasonCode], ['QUOTA_EXCEEDED', 'Quota.RealtimeSubscriptions.Exhausted']);
    const full = connect(params);
    const refused = new Feed(full.client, CHANGES);
    assert.equal(await full.closed, 4429);
    await refused.until(() => refused.error !== null, 'the refused connection to end');
  });
});
