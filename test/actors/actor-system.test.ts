import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ActorId, ActorSystem, defineActor, fnv1a32, type ActorSystemOptions, RingBuffer } from '../../actors/index.js';
import { InProcessTransport } from '../../cluster/in-process-transport.js';
import { fromWireError, toWireError } from '../../cluster/wire-error.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { Logger } from '../../runtime/log.js';

type LogRecord = { level: string; msg: string; fields: Record<string, unknown> };

function captureLogger(records: LogRecord[], base: Record<string, unknown> = {}): Logger {
  const put = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    records.push({ level, msg, fields: { ...base, ...fields } });
  };
  return { info: put('info'), warn: put('warn'), error: put('error'), child: (f) => captureLogger(records, { ...base, ...f }) };
}

function makeSystem(overrides: Partial<ActorSystemOptions> = {}): { system: ActorSystem; logs: LogRecord[] } {
  const logs: LogRecord[] = [];
  const system = new ActorSystem({
    nodeId: 'node-a',
    idleMs: 60_000,
    askTimeoutMs: 2_000,
    maxMessagesPerTurn: 64,
    log: captureLogger(logs),
    transport: new InProcessTransport(),
    ...overrides,
  });
  return { system, logs };
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Bounded poll: resolves as soon as `cond` holds, fails after `limitMs`. */
async function until(cond: () => boolean, limitMs = 2_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function rejection(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    assert.equal(ServiceError.is(err), true, `expected a ServiceError, got ${String(err)}`);
    return err as ServiceError;
  }
  assert.fail('expected a rejection');
}

/** A counter whose durable state is a Map standing in for SQL rows. */
function counterActor(store: Map<string, number>, calls: { activate: number; deactivate: number }, idleMs?: number) {
  return defineActor<{ count: number }, Map<string, number>>({
    kind: 'counter',
    ...(idleMs === undefined ? {} : { idleMs }),
    async activate(id, db) {
      calls.activate++;
      return { count: db.get(id.key) ?? 0 };
    },
    handlers: {
      async add(ctx, payload: { by: number }, db) {
        ctx.state = { count: ctx.state.count + payload.by };
        db.set(ctx.id.key, ctx.state.count);
        return { count: ctx.state.count };
      },
      async get(ctx) {
        return { count: ctx.state.count };
      },
      async reject(ctx) {
        ctx.state = { count: ctx.state.count + 1000 }; // in-memory only, and kept: a declared error is not a crash
        throw new ServiceError('CONFLICT', 'Counter.Rejected', 'rejected on purpose', { field: 'count' });
      },
      async crash(ctx) {
        ctx.state = { count: -1 }; // half-updated state that must not survive
        const broken = null as unknown as { boom(): void };
        broken.boom();
        return null;
      },
    },
    async deactivate() {
      calls.deactivate++;
    },
  });
}

describe('actor id', () => {
  it('precomputes string form, escaped subject and FNV-1a shard', () => {
    const id = new ActorId('project', 'p1');
    assert.equal(id.str, 'project/p1');
    assert.equal(id.subject, 'plinth.actor.project.p1');
    assert.equal(fnv1a32(''), 0x811c9dc5);
    assert.equal(fnv1a32('a'), 0xe40c292c);
    assert.equal(fnv1a32('foobar'), 0xbf9cf968);
    assert.equal(id.shard, fnv1a32('project/p1'));
    assert.equal(new ActorId('project', 'p1').shard, id.shard);
  });

  it('escapes subject wildcards, dots, whitespace and the escape character injectively', () => {
    assert.equal(new ActorId('tenant', 'a.b*c>d e%f\tg').subject, 'plinth.actor.tenant.a%2Eb%2Ac%3Ed%20e%25f%09g');
    assert.notEqual(new ActorId('tenant', 'a.b').subject, new ActorId('tenant', 'a%2Eb').subject);
    assert.equal(new ActorId('tenant', 'é').subject, 'plinth.actor.tenant.%C3%A9');
  });

  it('rejects an invalid kind or an empty key', () => {
    for (const [kind, key] of [['', 'k'], ['a.b', 'k'], ['9x', 'k'], ['ok', '']]) {
      assert.throws(() => new ActorId(kind!, key!), (e: unknown) => ServiceError.is(e) && e.code === 'VALIDATION_FAILED' && e.reasonCode === 'Actor.InvalidId');
    }
  });
});

describe('ring buffer', () => {
  it('keeps FIFO order across growth and wrap-around', () => {
    const q = new RingBuffer<number>(2);
    const out: number[] = [];
    for (let i = 0; i < 3; i++) q.push(i);
    out.push(q.shift()!, q.shift()!);
    for (let i = 3; i < 10; i++) q.push(i);
    assert.equal(q.length, 8);
    for (let v = q.shift(); v !== undefined; v = q.shift()) out.push(v);
    assert.deepEqual(out, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(q.length, 0);
  });
});

describe('actor system', () => {
  it('activates once under 100 concurrent first asks', async () => {
    const { system } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls), store);
    const id = new ActorId('counter', 'c1');
    const replies = await Promise.all(Array.from({ length: 100 }, () => system.ask<{ count: number }>(id, 'add', { by: 1 })));
    assert.equal(calls.activate, 1);
    assert.deepEqual(
      replies.map((r) => r.count),
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    assert.deepEqual(system.stats(), { activations: 1, byKind: { counter: 1 }, processed: 100, failed: 0 });
    await system.stop();
  });

  it('processes messages in order and never interleaves a handler with the next', async () => {
    const { system } = makeSystem();
    const trace: string[] = [];
    const gate = deferred();
    system.register(
      defineActor<null, null>({
        kind: 'recorder',
        async activate() {
          return null;
        },
        handlers: {
          async step(_ctx, payload: { n: number }) {
            trace.push(`enter ${payload.n}`);
            if (payload.n === 0) await gate.promise; // storage work still pending
            await new Promise((r) => setImmediate(r));
            trace.push(`exit ${payload.n}`);
            return payload.n;
          },
        },
      }),
      null,
    );
    const id = new ActorId('recorder', 'r1');
    const pending = [0, 1, 2, 3].map((n) => system.ask<number>(id, 'step', { n }));
    await until(() => trace.length > 0);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(trace, ['enter 0']);
    gate.resolve();
    assert.deepEqual(await Promise.all(pending), [0, 1, 2, 3]);
    assert.deepEqual(trace, ['enter 0', 'exit 0', 'enter 1', 'exit 1', 'enter 2', 'exit 2', 'enter 3', 'exit 3']);
    await system.stop();
  });

  it('runs at most maxMessagesPerTurn messages, then yields the event loop', async () => {
    const { system } = makeSystem({ maxMessagesPerTurn: 3 });
    const trace: Array<number | string> = [];
    system.register(
      defineActor<null, null>({
        kind: 'recorder',
        async activate() {
          return null;
        },
        handlers: {
          async step(_ctx, payload: { n: number }) {
            trace.push(payload.n);
            return null;
          },
        },
      }),
      null,
    );
    const id = new ActorId('recorder', 'r1');
    const pending = Array.from({ length: 10 }, (_, n) => system.ask(id, 'step', { n }));
    setImmediate(() => trace.push('other work'));
    await Promise.all(pending);
    assert.deepEqual(trace, [0, 1, 2, 'other work', 3, 4, 5, 6, 7, 8, 9]);
    await system.stop();
  });

  it('passivates after idleMs and re-activates from durable state on the next message', async () => {
    const { system } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls, 30), store);
    const id = new ActorId('counter', 'c1');
    assert.deepEqual(await system.ask(id, 'add', { by: 5 }), { count: 5 });
    assert.equal(calls.activate, 1);
    await until(() => calls.deactivate === 1);
    assert.deepEqual(system.stats(), { activations: 0, byKind: { counter: 0 }, processed: 1, failed: 0 });
    assert.deepEqual(await system.ask(id, 'add', { by: 2 }), { count: 7 });
    assert.equal(calls.activate, 2);
    assert.equal(system.stats().activations, 1);
    await system.stop();
    assert.equal(calls.deactivate, 2);
  });

  it('holds a message that arrives during passivation until deactivate has finished, then re-activates', async () => {
    const { system } = makeSystem();
    const trace: string[] = [];
    const gate = deferred();
    system.register(
      defineActor<null, null>({
        kind: 'flusher',
        idleMs: 30,
        async activate() {
          trace.push('activate');
          return null;
        },
        handlers: {
          async ping() {
            trace.push('ping');
            return 'pong';
          },
        },
        async deactivate() {
          trace.push('deactivate start');
          await gate.promise; // flushing state to storage
          trace.push('deactivate end');
        },
      }),
      null,
    );
    const id = new ActorId('flusher', 'f1');
    assert.equal(await system.ask(id, 'ping', null), 'pong');
    await until(() => trace.includes('deactivate start'));
    const reply = system.ask(id, 'ping', null);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(trace, ['activate', 'ping', 'deactivate start']);
    gate.resolve();
    assert.equal(await reply, 'pong');
    assert.deepEqual(trace, ['activate', 'ping', 'deactivate start', 'deactivate end', 'activate', 'ping']);
    await system.stop();
  });

  it('keeps state when a handler throws a ServiceError', async () => {
    const { system, logs } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls), store);
    const id = new ActorId('counter', 'c1');
    await system.ask(id, 'add', { by: 3 });
    const err = await rejection(system.ask(id, 'reject', null));
    assert.deepEqual([err.code, err.reasonCode, err.message, err.details], ['CONFLICT', 'Counter.Rejected', 'rejected on purpose', { field: 'count' }]);
    assert.deepEqual(await system.ask(id, 'get', null), { count: 1003 });
    assert.equal(calls.activate, 1);
    assert.deepEqual(logs.filter((l) => l.level === 'error'), []);
    assert.deepEqual(system.stats(), { activations: 1, byKind: { counter: 1 }, processed: 3, failed: 0 });
    await system.stop();
  });

  it('masks a crashing handler, discards the activation and re-activates for the next message', async () => {
    const { system, logs } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls), store);
    const id = new ActorId('counter', 'c1');
    const other = new ActorId('counter', 'c2');
    await system.ask(id, 'add', { by: 4 });
    await system.ask(other, 'add', { by: 9 });
    // The message queued behind the crash must run on a fresh activation, not on the broken state.
    const [crash, after] = await Promise.allSettled([
      system.ask(id, 'crash', null, { correlationId: 'corr-1' }),
      system.ask(id, 'get', null),
    ]);
    assert.equal(crash.status, 'rejected');
    const err = (crash as PromiseRejectedResult).reason as ServiceError;
    assert.equal(ServiceError.is(err), true);
    assert.deepEqual([err.code, err.reasonCode, err.message, err.details], ['INTERNAL', 'Actor.HandlerFailed', 'internal error (corr-1)', {}]);
    assert.deepEqual(after, { status: 'fulfilled', value: { count: 4 } });
    assert.equal(calls.activate, 3); // c1, c2, c1 again
    assert.equal(calls.deactivate, 0); // the broken state was never handed to deactivate
    const errors = logs.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1);
    assert.deepEqual([errors[0]!.msg, errors[0]!.fields.actor, errors[0]!.fields.type, errors[0]!.fields.correlationId], [
      'actor handler failed',
      'counter/c1',
      'crash',
      'corr-1',
    ]);
    assert.match(String(errors[0]!.fields.error), /^TypeError: /);
    assert.deepEqual(await system.ask(other, 'get', null), { count: 9 });
    assert.deepEqual(system.stats(), { activations: 2, byKind: { counter: 2 }, processed: 5, failed: 1 });
    await system.stop();
  });

  it('fails every message waiting on a failed activation, and retries activation on the next message', async () => {
    const { system } = makeSystem();
    let attempts = 0;
    system.register(
      defineActor<{ name: string }, null>({
        kind: 'tenant',
        async activate(id) {
          attempts++;
          if (attempts === 1) throw new ServiceError('NOT_FOUND', 'Tenant.NotFound', `tenant ${id.key} not found`);
          return { name: id.key };
        },
        handlers: {
          async name(ctx) {
            return ctx.state.name;
          },
        },
      }),
      null,
    );
    const id = new ActorId('tenant', 't1');
    const results = await Promise.allSettled([1, 2, 3].map(() => system.ask(id, 'name', null)));
    assert.deepEqual(
      results.map((r) => (r.status === 'rejected' ? [(r.reason as ServiceError).code, (r.reason as ServiceError).reasonCode] : r.value)),
      [
        ['NOT_FOUND', 'Tenant.NotFound'],
        ['NOT_FOUND', 'Tenant.NotFound'],
        ['NOT_FOUND', 'Tenant.NotFound'],
      ],
    );
    assert.equal(attempts, 1);
    assert.equal(await system.ask(id, 'name', null), 't1');
    assert.equal(attempts, 2);
    await system.stop();
  });

  it('times out an ask with a retryable UNAVAILABLE', async () => {
    const { system } = makeSystem();
    const gate = deferred();
    system.register(
      defineActor<null, null>({
        kind: 'slow',
        async activate() {
          return null;
        },
        handlers: {
          async wait() {
            await gate.promise;
            return 'late';
          },
        },
      }),
      null,
    );
    const err = await rejection(system.ask(new ActorId('slow', 's1'), 'wait', null, { timeoutMs: 20 }));
    assert.deepEqual([err.code, err.reasonCode, err.message, err.details, err.retryable], [
      'UNAVAILABLE',
      'Actor.AskTimeout',
      'slow/s1 did not reply to wait within 20 ms',
      { retryable: true },
      true,
    ]);
    gate.resolve();
    await system.stop();
  });

  it('rejects an unknown message type without activating, and an unknown kind', async () => {
    const { system } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls), store);
    const e1 = await rejection(system.ask(new ActorId('counter', 'c1'), 'toString', null));
    assert.deepEqual([e1.code, e1.reasonCode, e1.message], ['VALIDATION_FAILED', 'Actor.UnknownMessage', 'actor kind counter has no message "toString"']);
    assert.equal(calls.activate, 0);
    const e2 = await rejection(system.ask(new ActorId('ghost', 'g1'), 'get', null));
    assert.deepEqual([e2.code, e2.reasonCode, e2.message], ['NOT_FOUND', 'Actor.UnknownKind', 'no actor kind "ghost" is registered']);
    assert.deepEqual(system.stats(), { activations: 0, byKind: { counter: 0 }, processed: 0, failed: 0 });
    await system.stop();
  });

  it('logs a failed tell instead of leaking an unhandled rejection', async () => {
    const { system, logs } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls), store);
    const id = new ActorId('counter', 'c1');
    system.tell(id, 'add', { by: 2 });
    system.tell(id, 'reject', null);
    system.tell(id, 'nope', null);
    await until(() => logs.filter((l) => l.msg === 'actor tell failed').length === 2);
    assert.deepEqual(
      logs.filter((l) => l.msg === 'actor tell failed').map((l) => [l.level, l.fields.actor, l.fields.type, l.fields.reasonCode]),
      [
        ['warn', 'counter/c1', 'nope', 'Actor.UnknownMessage'],
        ['warn', 'counter/c1', 'reject', 'Counter.Rejected'],
      ],
    );
    assert.deepEqual(await system.ask(id, 'get', null), { count: 1002 });
    await system.stop();
  });

  it('stop() finishes in-flight turns, deactivates every actor and refuses later asks', async () => {
    const { system } = makeSystem();
    const store = new Map<string, number>();
    const calls = { activate: 0, deactivate: 0 };
    system.register(counterActor(store, calls), store);
    const gate = deferred();
    let entered = false;
    system.register(
      defineActor<null, null>({
        kind: 'slow',
        async activate() {
          return null;
        },
        handlers: {
          async wait() {
            entered = true;
            await gate.promise;
            return 'done';
          },
        },
      }),
      null,
    );
    await system.ask(new ActorId('counter', 'c1'), 'add', { by: 1 });
    await system.ask(new ActorId('counter', 'c2'), 'add', { by: 1 });
    const inFlight = system.ask(new ActorId('slow', 's1'), 'wait', null);
    await until(() => entered);
    let stopped = false;
    const stopping = system.stop().then(() => (stopped = true));
    const late = await rejection(system.ask(new ActorId('counter', 'c1'), 'get', null));
    assert.deepEqual([late.code, late.reasonCode, late.retryable], ['UNAVAILABLE', 'Actor.SystemStopped', true]);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(stopped, false);
    gate.resolve();
    assert.equal(await inFlight, 'done');
    await stopping;
    assert.equal(calls.deactivate, 2);
    assert.deepEqual(system.stats(), { activations: 0, byKind: { counter: 0, slow: 0 }, processed: 3, failed: 0 });
    const after = await rejection(system.ask(new ActorId('counter', 'c1'), 'get', null));
    assert.deepEqual([after.code, after.reasonCode, after.message], ['UNAVAILABLE', 'Actor.SystemStopped', 'actor system on node node-a is stopped']);
    system.tell(new ActorId('counter', 'c1'), 'add', { by: 1 }); // must neither throw nor reject
  });
});

describe('in-process transport', () => {
  it('round-trips a ServiceError through wire data with code, reasonCode and details intact', () => {
    const original = new ServiceError('ACCESS_DENIED', 'Grant.Missing', 'missing grant', { missingGrants: ['project.publish'], retryable: false });
    const wire = toWireError(original);
    assert.deepEqual(wire, { code: 'ACCESS_DENIED', reasonCode: 'Grant.Missing', message: 'missing grant', details: { missingGrants: ['project.publish'], retryable: false } });
    const back = fromWireError(JSON.parse(JSON.stringify(wire)));
    assert.equal(ServiceError.is(back), true);
    assert.deepEqual([back.code, back.reasonCode, back.message, back.details], ['ACCESS_DENIED', 'Grant.Missing', 'missing grant', { missingGrants: ['project.publish'], retryable: false }]);
    assert.deepEqual(toWireError(new TypeError('secret SQL text')), { code: 'INTERNAL', reasonCode: 'Internal.Unexpected', message: 'internal error', details: {} });
    const junk = fromWireError({ code: 'NOPE', details: [1] });
    assert.deepEqual([junk.code, junk.reasonCode, junk.message, junk.details], ['INTERNAL', 'Internal.Unexpected', 'internal error', {}]);
  });

  it('delivers a handler ServiceError as a new instance rebuilt from wire data', async () => {
    const thrown = new ServiceError('QUOTA_EXCEEDED', 'Quota.Branches', 'branch quota reached', { field: 'branches', headers: { 'x-quota-limit': '5' } });
    const { system } = makeSystem();
    system.register(
      defineActor<null, null>({
        kind: 'quota',
        async activate() {
          return null;
        },
        handlers: {
          async check() {
            throw thrown;
          },
        },
      }),
      null,
    );
    const err = await rejection(system.ask(new ActorId('quota', 'q1'), 'check', null));
    assert.notEqual(err, thrown);
    assert.deepEqual([err.code, err.reasonCode, err.message, err.details], ['QUOTA_EXCEEDED', 'Quota.Branches', 'branch quota reached', { field: 'branches', headers: { 'x-quota-limit': '5' } }]);
    await system.stop();
  });

  it('copies payloads and replies and refuses data the wire could not carry', async () => {
    const { system } = makeSystem();
    system.register(
      defineActor<{ items: string[] }, null>({
        kind: 'list',
        async activate() {
          return { items: ['a'] };
        },
        handlers: {
          async items(ctx) {
            return ctx.state.items; // a live reference into state: the caller must get a copy
          },
          async push(ctx, payload: { item: string }) {
            ctx.state.items.push(payload.item);
            return null;
          },
          async when() {
            return { at: new Date(0) };
          },
        },
      }),
      null,
    );
    const id = new ActorId('list', 'l1');
    const got = await system.ask<string[]>(id, 'items', null);
    got.push('mutated by caller');
    assert.deepEqual(await system.ask(id, 'items', null), ['a']);
    const bad = await rejection(system.ask(id, 'push', { item: 'b', extra: [1, { n: Number.NaN }] }));
    assert.deepEqual([bad.code, bad.reasonCode, bad.message], ['VALIDATION_FAILED', 'Actor.NonPlainPayload', 'payload of push is not plain data at .extra[1].n: non-finite number NaN']);
    const reply = await rejection(system.ask(id, 'when', null));
    assert.deepEqual([reply.code, reply.reasonCode, reply.message], ['INTERNAL', 'Actor.NonPlainReply', 'reply is not plain data at .at: instance of Date']);
    assert.deepEqual(await system.ask(id, 'items', null), ['a']);
    await system.stop();
  });
});
