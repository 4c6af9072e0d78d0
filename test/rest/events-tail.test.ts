/**
 * GET /api/events/tail over SSE with a real client (`eventsource`): events
 * committed after the client connected arrive as `service.event` with the
 * envelope; Last-Event-ID resumes after a position; a client going away
 * frees the server side; no credential → a 401 JSON error, never a stream.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventSource } from 'eventsource';
import { bootstrapProject, defineEntity, errorOf, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus, type Json } from '../support/expect.js';
import { sseStreams, writeStream } from '../../adapters/rest/sse.js';
import type { ReplyTarget } from '../../adapters/rest/write.js';
import type { StreamSink } from '../../runtime/operations/types.js';

const WAIT_MS = 10_000;

interface Received {
  id: string;
  type: string;
  envelope: Json;
}

/** An SSE client on the project's tail that records every `service.event`. */
class Tail {
  readonly events: Received[] = [];
  private waiters: Array<() => void> = [];
  readonly es: EventSource;
  readonly opened: Promise<void>;

  constructor(url: string, headers: Record<string, string>) {
    this.es = new EventSource(`${url}/api/events/tail`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    });
    this.opened = new Promise((resolve, reject) => {
      this.es.addEventListener('open', () => resolve());
      this.es.addEventListener('error', (e) => reject(new Error(`tail failed to open: ${String((e as { message?: string }).message)}`)));
    });
    this.es.addEventListener('service.event', (e) => {
      const envelope = JSON.parse(e.data) as Json;
      this.events.push({ id: e.lastEventId, type: e.type, envelope });
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Waits until an event matches `pred`; returns it. */
  async waitFor(pred: (r: Received) => boolean, what: string): Promise<Received> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const hit = this.events.find(pred);
      if (hit !== undefined) return hit;
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(this.events.map((r) => r.envelope.type))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.es.close();
  }
}

forEachBackend('events tail (SSE)', (backend: Backend) => {
  let server: TestServer;
  let client: Client;
  let scopeHeaders: Record<string, string>;
  let auth: Record<string, string>;
  const tails: Tail[] = [];

  const open = async (extra: Record<string, string> = {}): Promise<Tail> => {
    const t = new Tail(server.url, { ...auth, ...scopeHeaders, ...extra });
    tails.push(t);
    await t.opened;
    return t;
  };
  const createCustomer = async (name: string): Promise<string> => {
    const r = await client.post('/api/customers', { email: `${randomUUID()}@example.com`, name });
    expectStatus(r, 201);
    return r.body.data.id as string;
  };

  /** Waits until the entity's event has been moved from the outbox into the log. */
  const inLog = async (entityId: string): Promise<void> => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const r = await client.get(`/api/events?pageSize=200&filter=${encodeURIComponent(JSON.stringify({ type: 'entity.Customer.created' }))}`);
      expectStatus(r, 200);
      if ((r.body.data as Json[]).some((e) => e.data.entityId === entityId)) return;
      if (Date.now() > deadline) assert.fail('event never reached the log');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken, `s${randomUUID().slice(0, 8)}`);
    client = p.client;
    scopeHeaders = { 'x-service-tenant': p.tenant, 'x-service-project': p.project };
    auth = { authorization: `Bearer ${server.adminToken}` };
    await defineEntity(client, { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: false }, { name: 'name', type: 'String', nullable: true }] });
  });
  after(async () => {
    for (const t of tails) t.close();
    await server?.close();
  });

  it('streams a write made after the client connected, with the envelope', async () => {
    // An event already in the log when the client connects is not replayed: the tail starts at the end of the log.
    const earlier = await createCustomer('before');
    await inLog(earlier);
    const tail = await open();
    const id = await createCustomer('after');
    const got = await tail.waitFor((r) => r.envelope.data?.entityId === id, 'the created event');
    assert.equal(got.type, 'service.event');
    assert.equal(got.envelope.type, 'entity.Customer.created');
    assert.deepEqual(Object.keys(got.envelope).sort(), ['correlationId', 'data', 'id', 'occurredAt', 'projectId', 'publicationVersion', 'tenantId', 'type']);
    assert.deepEqual(got.envelope.data, { entity: 'Customer', entityId: id, changedFields: ['email', 'name'], branch: 'main' });
    assert.match(got.id, /^e\d+$/);
    // The same event through the list route: the tail is the log, not a second source.
    const listed = await client.get(`/api/events/${got.envelope.id}`);
    expectStatus(listed, 200);
    assert.deepEqual(listed.body.data, got.envelope);
    assert.ok(!tail.events.some((r) => r.envelope.data?.entityId === earlier), 'an event from before the connection was streamed');
    tail.close();
  });

  it('Last-Event-ID resumes after that position and delivers only later events', async () => {
    const first = await open();
    const a = await createCustomer('a');
    const seenA = await first.waitFor((r) => r.envelope.data?.entityId === a, 'event a');
    first.close();
    // Written while no client is connected.
    const b = await createCustomer('b');
    const c = await createCustomer('c');
    const resumed = await open({ 'last-event-id': seenA.id });
    await resumed.waitFor((r) => r.envelope.data?.entityId === c, 'event c');
    const ids = resumed.events.map((r) => r.envelope.data?.entityId);
    assert.deepEqual(ids.slice(0, 2), [b, c], `expected b then c, got ${JSON.stringify(ids)}`);
    assert.ok(!ids.includes(a), 'the event at Last-Event-ID was delivered again');
    // Positions increase along the stream.
    const seqs = resumed.events.map((r) => BigInt(r.id.slice(1)));
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!) && seqs[0]! > BigInt(seenA.id.slice(1)));
    resumed.close();

    // A position this log never produced is refused before any stream starts.
    const bad = await fetch(`${server.url}/api/events/tail`, { headers: { ...auth, ...scopeHeaders, 'last-event-id': 'nope' } });
    assert.equal(bad.status, 422);
    assert.equal(errorOf({ status: bad.status, headers: bad.headers, body: await bad.json(), text: '' }).reasonCode, 'Events.InvalidLastEventId');
  });

  it('a Last-Event-ID past the end of the log is 422 before any stream (events and audit tails); the end itself resumes', async () => {
    // The project's newest position, read from a tail that saw a fresh write.
    const live = await open();
    const marker = await createCustomer('marker');
    const seen = await live.waitFor((r) => r.envelope.data?.entityId === marker, 'marker event');
    live.close();
    const end = BigInt(seen.id.slice(1));
    const refuse = async (path: string, lastEventId: string, reason: string): Promise<void> => {
      const r = await fetch(`${server.url}${path}`, { headers: { ...auth, ...scopeHeaders, 'last-event-id': lastEventId } });
      assert.equal(r.status, 422, `${path} with Last-Event-ID ${lastEventId}`);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      const e = errorOf({ status: r.status, headers: r.headers, body: await r.json(), text: '' });
      assert.equal(e.reasonCode, reason);
      assert.equal(e.field, 'Last-Event-ID');
    };
    await refuse('/api/events/tail', `e${end + 1000n}`, 'Events.InvalidLastEventId');
    await refuse('/api/events/tail', 'e9223372036854775807', 'Events.InvalidLastEventId');
    await refuse('/api/audit/tail', 'a9223372036854775807', 'Audit.InvalidLastEventId');
    // The current end is a valid position: the stream opens and waits for later events.
    const atEnd = await open({ 'last-event-id': seen.id });
    const after = await createCustomer('after end');
    await atEnd.waitFor((r) => r.envelope.data?.entityId === after, 'event after the end position');
    atEnd.close();
  });

  it('without a token → 401 JSON error, not a stream', async () => {
    const r = await fetch(`${server.url}/api/events/tail`, { headers: { ...scopeHeaders, accept: 'text/event-stream' } });
    assert.equal(r.status, 401);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    const body = (await r.json()) as Json;
    assert.equal(errorOf({ status: 401, headers: r.headers, body, text: '' }).code, 'UNAUTHORIZED');
  });

  it('clients that go away free the server side; shutdown with a stream open is prompt', async () => {
    // The node runs in this process, so its count of open streams is visible here.
    const waitOpen = async (n: number): Promise<void> => {
      const deadline = Date.now() + WAIT_MS;
      while (sseStreams.open !== n) {
        if (Date.now() > deadline) assert.fail(`server still has ${sseStreams.open} open streams, expected ${n}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await waitOpen(0);
    // Raw fetch streams, dropped abruptly mid-stream.
    for (let i = 0; i < 5; i++) {
      const ac = new AbortController();
      const r = await fetch(`${server.url}/api/events/tail`, { headers: { ...auth, ...scopeHeaders }, signal: ac.signal });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = r.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /^retry: \d+\n: open\n\n/);
      assert.equal(sseStreams.open, 1);
      ac.abort();
      await waitOpen(0);
    }
    // An EventSource that closes releases its stream too.
    const once = await open();
    assert.equal(sseStreams.open, 1);
    once.close();
    await waitOpen(0);
    // The server keeps serving, and a live tail still gets new events.
    const live = await open();
    const id = await createCustomer('still served');
    await live.waitFor((r) => r.envelope.data?.entityId === id, 'event after aborted clients');
    expectStatus(await client.get('/api/health'), 200);

    const closed = new Promise<void>((resolve) => live.es.addEventListener('error', () => resolve()));
    const t0 = Date.now();
    await server.stop();
    const stopMs = Date.now() - t0;
    await closed;
    assert.equal(sseStreams.open, 0, 'shutdown left a stream open');
    console.log(`[${backend}] node stop with an open SSE stream took ${stopMs} ms`);
    assert.ok(stopMs < 5_000, `shutdown took ${stopMs} ms`);
  });
});

/** A uWS response stand-in: accepts `room` bytes, then reports backpressure until drained. */
function fakeResponse(room: number) {
  const state = { chunks: [] as string[], written: 0, room, ended: false, onWritable: null as ((offset: number) => boolean) | null };
  const res = {
    cork(cb: () => void) { cb(); return res; },
    writeStatus() { return res; },
    writeHeader() { return res; },
    write(chunk: string) { state.chunks.push(chunk); state.written += chunk.length; return state.written <= state.room; },
    end() { state.ended = true; return res; },
    onWritable(h: (offset: number) => boolean) { state.onWritable = h; return res; },
  };
  return { res, state };
}

describe('SSE writer (backpressure, end, abort)', () => {
  const open = (room: number, maxBufferedBytes: number) => {
    const { res, state } = fakeResponse(room);
    const t = { res, aborted: false, correlationId: 'c', cors: null, closeConnection: false } as unknown as ReplyTarget;
    let sink: StreamSink | null = null;
    let closes = 0;
    writeStream(t, '200 OK', undefined, { open: (s) => { sink = s; return () => void closes++; } }, { heartbeatMs: 60_000, maxBufferedBytes, retryMs: 1000 });
    return { t, state, sink: sink! as StreamSink, closes: () => closes };
  };

  it('queues while the socket is full, flushes on writable, and drops a client past the bound', () => {
    const before = { ...sseStreams };
    const s = open(0, 300); // the very first write (headers + retry) already fills the socket
    const event = 'x'.repeat(80);
    assert.equal(s.sink.send('service.event', event, 'e1'), true);
    assert.equal(s.state.chunks.length, 1, 'queued, not written, while blocked');
    s.state.room = Infinity;
    assert.equal(s.state.onWritable!(0), true);
    assert.equal(s.state.chunks.length, 2);
    assert.match(s.state.chunks[1]!, /^id: e1\nevent: service.event\ndata: x{80}\n\n$/);
    // Blocked again: the queue grows to the bound, then the client is dropped with a clear end.
    s.state.room = 0;
    let accepted = 0;
    while (s.sink.send('service.event', event, `e${accepted + 2}`)) accepted++;
    assert.ok(accepted >= 2 && accepted <= 4, `accepted ${accepted} events past the bound`);
    assert.equal(s.state.ended, true);
    assert.match(s.state.chunks.at(-1)!, /^: dropped/);
    assert.equal(s.closes(), 1, 'producer closed once');
    assert.equal(s.sink.send('service.event', event), false);
    assert.equal(sseStreams.open, before.open);
    assert.equal(sseStreams.dropped, before.dropped + 1);
  });

  it('newlines cannot forge fields; end and abort close the producer exactly once', () => {
    const a = open(Infinity, 1000);
    a.sink.send('service.event', 'one\nid: forged', 'e1\nevent: x');
    assert.equal(a.state.chunks[1], 'id: e1 event: x\nevent: service.event\ndata: one id: forged\n\n');
    a.sink.end();
    a.sink.end();
    assert.equal(a.state.ended, true);
    assert.equal(a.closes(), 1);

    const b = open(Infinity, 1000);
    b.t.aborted = true;
    b.t.onAbort!();
    b.t.onAbort!();
    assert.equal(b.closes(), 1);
    assert.equal(b.sink.send('service.event', '{}'), false);
    assert.equal(b.state.ended, false, 'an aborted response is never touched');
  });
});
