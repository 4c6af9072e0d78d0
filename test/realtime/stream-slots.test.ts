/**
 * One count of long-lived streams per actor and per node, whatever the
 * protocol (issue 22 finding 4): gRPC StreamList and Watch, realtime SSE and
 * WebSocket, graphql-ws subscriptions and the event tail take their slots
 * from the same place. Past the actor's bound (REALTIME_MAX_SUBSCRIPTIONS_PER_ACTOR)
 * or the node's (MAX_STREAMS_PER_NODE) each protocol refuses with its typed
 * QUOTA_EXCEEDED: HTTP 429 with the error envelope, gRPC RESOURCE_EXHAUSTED
 * with x-service-* trailers, a graphql-ws `error` message with extensions.code.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { expectStatus, type Json } from '../support/expect.js';
import { registerReader } from './reader.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { clientOf, fetchProto, loadProto, metadata, serviceTrailers } from '../grpc/support.js';

const PER_ACTOR = 3;
const PER_NODE = 8;
const WAIT_MS = 10_000;
const CHANGES = 'subscription { orderChanged { kind entityId changedFields } }';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A StreamList call nobody reads: settles once the server started it (headers) or ended it (status). */
function pausedStreamList(service: any, md: grpc.Metadata): { call: grpc.ClientReadableStream<unknown>; outcome: Promise<grpc.StatusObject | 'started'> } {
  const call = service.StreamList({ sort: 'total' }, md) as grpc.ClientReadableStream<unknown>;
  call.on('error', () => {});
  const outcome = new Promise<grpc.StatusObject | 'started'>((resolve) => {
    call.on('metadata', () => resolve('started'));
    call.on('status', resolve);
  });
  return { call, outcome };
}

/** An SSE response held open (its body unread); `close()` ends it from the client's side. */
async function openSse(url: string, headers: Record<string, string>): Promise<{ res: Response; close: () => void }> {
  const ctl = new AbortController();
  const res = await fetch(url, { headers, signal: ctl.signal });
  return { res, close: () => ctl.abort() };
}

/** A graphql-ws subscription's first `error` message (graphql-ws hands the errors to the sink as an array), or null while none came. */
function subscribe(client: WsClient): { errors: () => Array<{ extensions: Record<string, unknown> }> | null; ended: Promise<void>; dispose: () => void } {
  let errors: Array<{ extensions: Record<string, unknown> }> | null = null;
  let done!: () => void;
  const ended = new Promise<void>((r) => { done = r; });
  const dispose = client.subscribe({ query: CHANGES }, {
    next: () => {},
    error: (e) => { errors = e as typeof errors; done(); },
    complete: () => done(),
  });
  return { errors: () => errors, ended, dispose };
}

forEachBackend('stream slots across protocols', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let scope: Record<string, string>;
  let orders: any;
  let wsUrl: string;
  const cleanups: Array<() => void> = [];

  const slotsOpen = (): number => server.node.services.streams.slots.open;
  async function slotsBecome(n: number, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (slotsOpen() !== n) {
      if (Date.now() > deadline) assert.fail(`${what}: ${slotsOpen()} slots open, expected ${n}`);
      await sleep(20);
    }
  }

  /** A registered user holding entity:Order:read. */
  const reader = (): Promise<string> => registerReader({ client: admin, projectId: scope.projectId! });

  function graphqlWs(token: string): WsClient {
    const client = createClient({
      url: `${wsUrl}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true,
      connectionParams: { authorization: `Bearer ${token}`, 'x-service-tenant': scope['x-service-tenant']!, 'x-service-project': scope['x-service-project']! },
    });
    cleanups.push(() => void client.dispose());
    return client;
  }

  const headersOf = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}`, 'x-service-tenant': scope['x-service-tenant']!, 'x-service-project': scope['x-service-project']! });

  const assertHttpQuota = async (res: Response, reasonCode: string, limit: number): Promise<void> => {
    assert.equal(res.status, 429);
    const body = (await res.json()) as Json;
    assert.equal(body.error.code, 'QUOTA_EXCEEDED');
    assert.equal(body.error.reasonCode, reasonCode);
    assert.equal(body.error.correlationId, res.headers.get('x-service-correlation-id'));
    assert.equal(res.headers.get('x-service-quota-limit'), String(limit));
  };
  const assertGrpcQuota = (s: grpc.StatusObject | 'started', reasonCode: string): void => {
    assert.notEqual(s, 'started', 'refused');
    const status = s as grpc.StatusObject;
    assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED, status.details);
    const t = serviceTrailers(status.metadata);
    assert.deepEqual([t.code, t.reasonCode], ['QUOTA_EXCEEDED', reasonCode]);
    assert.match(t.correlationId, /^[0-9a-f-]{36}$/);
  };
  const assertGraphqlQuota = async (sub: ReturnType<typeof subscribe>, reasonCode: string): Promise<void> => {
    await Promise.race([sub.ended, sleep(WAIT_MS)]);
    const errors = sub.errors();
    assert.ok(errors !== null && errors.length > 0, 'an error message');
    assert.equal(errors[0]!.extensions.code, 'QUOTA_EXCEEDED');
    assert.equal(errors[0]!.extensions.reasonCode, reasonCode);
    assert.equal(typeof errors[0]!.extensions.correlationId, 'string');
  };

  before(async () => {
    server = await startServer({ backend, env: { REALTIME_MAX_SUBSCRIPTIONS_PER_ACTOR: String(PER_ACTOR), MAX_STREAMS_PER_NODE: String(PER_NODE) } });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    scope = { 'x-service-tenant': p.tenant, 'x-service-project': p.project, projectId: p.projectId };
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: false }, { name: 'note', type: 'String', nullable: false }] });
    // Enough rows that a StreamList nobody reads stays open for the whole test: grpc-js clients
    // that never read still take a few pages a second (docs/grpc.md), so 1,000 rows were drained
    // within a loaded CI run's 10 s and the stream ended on its own, freeing its slot early.
    for (let b = 0; b < 6; b++) {
      expectStatus(await admin.post('/api/orders/batch', { items: Array.from({ length: 1000 }, (_, i) => ({ total: b * 1000 + i, note: `order ${i} ${'x'.repeat(80)}` })) }), 201);
    }
    orders = clientOf(loadProto(await fetchProto(admin)), 'OrderService', server.node.grpcPort);
    wsUrl = server.url.replace('http', 'ws');
  });
  after(async () => {
    for (const c of cleanups) c();
    orders?.close();
    await server?.close();
  });

  it('per actor: gRPC streams, graphql-ws and SSE share one bound; past it each protocol refuses with its typed QUOTA_EXCEEDED; a cancelled stream frees its slot', async () => {
    const alice = await reader();
    const md = metadata(alice, scope['x-service-tenant']!, scope['x-service-project']!);
    const a1 = pausedStreamList(orders, md);
    const a2 = pausedStreamList(orders, md);
    assert.equal(await a1.outcome, 'started');
    assert.equal(await a2.outcome, 'started');
    cleanups.push(() => a1.call.cancel(), () => a2.call.cancel());
    const ws = graphqlWs(alice);
    const sub = subscribe(ws);
    cleanups.push(sub.dispose);
    await slotsBecome(PER_ACTOR, 'two StreamLists and a subscription');

    // Alice is at her bound on every protocol.
    await assertGraphqlQuota(subscribe(ws), 'Quota.RealtimeSubscriptionsPerActor');
    const sse = await openSse(`${server.url}/api/realtime/sse?entity=Order`, headersOf(alice));
    await assertHttpQuota(sse.res, 'Quota.RealtimeSubscriptionsPerActor', PER_ACTOR);
    assertGrpcQuota(await pausedStreamList(orders, md).outcome, 'Quota.StreamsPerActor');
    // Another user is not held back by her.
    const bob = pausedStreamList(orders, metadata(await reader(), scope['x-service-tenant']!, scope['x-service-project']!));
    assert.equal(await bob.outcome, 'started');
    bob.call.cancel();

    // A cancelled StreamList gives its slot back: her SSE opens.
    a1.call.cancel();
    await slotsBecome(PER_ACTOR - 1, 'after the cancel');
    const again = await openSse(`${server.url}/api/realtime/sse?entity=Order`, headersOf(alice));
    assert.equal(again.res.status, 200);
    again.close();
    a2.call.cancel();
    sub.dispose();
    await slotsBecome(0, 'every stream of the test ended');
  });

  it('per node: event tails, realtime SSE, graphql-ws and gRPC streams share the node\'s bound; the platform admin is counted too', async () => {
    const bob = await reader();
    const ws = graphqlWs(bob);
    const first = subscribe(ws);
    cleanups.push(first.dispose);
    await slotsBecome(1, 'bob\'s subscription');
    const tails: Array<{ res: Response; close: () => void }> = [];
    for (let i = 1; i < PER_NODE; i++) {
      const t = await openSse(`${server.url}/api/events/tail`, headersOf(server.adminToken));
      assert.equal(t.res.status, 200);
      tails.push(t);
      cleanups.push(t.close);
    }
    await slotsBecome(PER_NODE, 'the node is full');

    const tail = await openSse(`${server.url}/api/events/tail`, headersOf(server.adminToken));
    await assertHttpQuota(tail.res, 'Quota.StreamsPerNode', PER_NODE);
    const sse = await openSse(`${server.url}/api/realtime/sse?entity=Order`, headersOf(bob));
    await assertHttpQuota(sse.res, 'Quota.StreamsPerNode', PER_NODE);
    await assertGraphqlQuota(subscribe(ws), 'Quota.StreamsPerNode');
    assertGrpcQuota(await pausedStreamList(orders, metadata(bob, scope['x-service-tenant']!, scope['x-service-project']!)).outcome, 'Quota.StreamsPerNode');

    // A tail the client closes frees its slot.
    tails.pop()!.close();
    await slotsBecome(PER_NODE - 1, 'after a tail closed');
    const opened = await openSse(`${server.url}/api/realtime/sse?entity=Order`, headersOf(bob));
    assert.equal(opened.res.status, 200);
    opened.close();
    for (const t of tails) t.close();
    first.dispose();
    await slotsBecome(0, 'every stream of the test ended');
  });
});
