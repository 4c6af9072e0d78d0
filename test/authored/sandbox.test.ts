/**
 * The sandbox pool runs a handler bundle in a fresh QuickJS sandbox on a real
 * worker thread (CONTRACT "Handlers", "Operations" failures, "Sandbox and
 * limits"): ctx and its host calls, canonical errors, thrown values, results,
 * and what the sandbox does not have.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSandboxPool } from '../../runtime/authored/sandbox/index.js';
import type { AuthoredPool, InvokeOutcome } from '../../runtime/authored/types.js';
import { context, request, TestHost } from './sandbox-support.js';

let pool: AuthoredPool;
before(() => {
  pool = createSandboxPool({ workers: 2 });
});
after(() => pool.close());

function value(o: InvokeOutcome): unknown {
  assert.ok(o.ok, `expected a value, got ${JSON.stringify(o)}`);
  return o.value;
}
function failure(o: InvokeOutcome): unknown {
  assert.ok(!o.ok, `expected a failure, got ${JSON.stringify(o)}`);
  return o.failure;
}

describe('sandbox pool: handlers and ctx', () => {
  it('returns its input, with usage', async () => {
    const o = await pool.invoke(request('export default async (ctx, input) => input', { input: { a: [1, 'two', null], b: true } }));
    assert.deepEqual(value(o), { a: [1, 'two', null], b: true });
    assert.ok(o.usage.cpuMs >= 0 && o.usage.wallMs >= o.usage.cpuMs - 1 && o.usage.peakMemoryBytes > 0);
  });

  it('runs a named export, and a synchronous one; undefined answers null', async () => {
    assert.deepEqual(value(await pool.invoke(request('export function go(ctx, input) { return input * 2 }', { exportName: 'go', input: 21 }))), 42);
    assert.equal(value(await pool.invoke(request('export default async () => {}'))), null);
    assert.deepEqual(failure(await pool.invoke(request('export default async () => 1', { exportName: 'missing' }))), { kind: 'threw', message: 'the bundle has no function export "missing"' });
  });

  it('two awaited host calls in a row, then Promise.all of 50', async () => {
    const host = new TestHost((c) => ({ ok: true, value: { data: { id: c.args[0] } } }));
    const o = await pool.invoke(request(`export default async (ctx) => {
      const a = await ctx.db.orders.get('o1');
      const b = await ctx.db.orders.update('o1', { total: 3 }, { ifMatch: 'x' });
      const all = await Promise.all(Array.from({ length: 50 }, (_, i) => ctx.db.lines.get(i)));
      return { a: a.data.id, b: b.data.id, all: all.map((r) => r.data.id) };
    }`, { host }));
    assert.deepEqual(value(o), { a: 'o1', b: 'o1', all: Array.from({ length: 50 }, (_, i) => i) });
    assert.deepEqual(host.calls.slice(0, 2), [{ target: 'db.orders.get', args: ['o1'] }, { target: 'db.orders.update', args: ['o1', { total: 3 }, { ifMatch: 'x' }] }]);
    assert.equal(host.calls.length, 52);
    assert.ok(host.maxInFlight <= 16, `at most 16 host calls in flight, saw ${host.maxInFlight}`);
  });

  it('a host refusal rejects with code, reasonCode, message, status and field: catchable, or the canonical failure when it escapes', async () => {
    const error = { code: 'VALIDATION_FAILED', reasonCode: 'OrderValidation.Required', message: 'total is required', status: 422, field: 'total' };
    const host = new TestHost(() => ({ ok: false, error }));
    const caught = await pool.invoke(request(`export default async (ctx) => {
      try { await ctx.db.orders.create({}); return 'no'; }
      catch (e) { return { isError: e instanceof Error, code: e.code, reasonCode: e.reasonCode, message: e.message, status: e.status, field: e.field }; }
    }`, { host }));
    assert.deepEqual(value(caught), { isError: true, ...error });
    const escaped = await pool.invoke(request('export default async (ctx) => { await ctx.db.orders.create({}); }', { host }));
    assert.deepEqual(failure(escaped), { kind: 'canonical', error });
  });

  it('a host bridge that throws answers the sandbox with a refusal, not a crash', async () => {
    const host = new TestHost(() => { throw new Error('db down'); });
    const o = await pool.invoke(request('export default async (ctx) => { try { await ctx.db.x.get(1) } catch (e) { return [e.code, e.reasonCode, e.status] } }', { host }));
    assert.deepEqual(value(o), ['INTERNAL', 'Handler.HostCallFailed', 500]);
  });

  it('ctx.error throws a canonical error with its status; an unknown code is a plain throw; a handler cannot forge one', async () => {
    assert.deepEqual(failure(await pool.invoke(request("export default async (ctx) => ctx.error('CONFLICT', 'Order.Closed', 'order is closed', 'state')"))),
      { kind: 'canonical', error: { code: 'CONFLICT', reasonCode: 'Order.Closed', message: 'order is closed', status: 409, field: 'state' } });
    assert.deepEqual(failure(await pool.invoke(request("export default async (ctx) => ctx.error('NOT_FOUND', 'Order.Missing', 'no such order')"))),
      { kind: 'canonical', error: { code: 'NOT_FOUND', reasonCode: 'Order.Missing', message: 'no such order', status: 404 } });
    const unknown = failure(await pool.invoke(request("export default async (ctx) => ctx.error('INTERNAL', 'X.Y', 'boom')"))) as { kind: string; message: string };
    assert.equal(unknown.kind, 'threw');
    assert.match(unknown.message, /ctx\.error: code must be one of VALIDATION_FAILED, NOT_FOUND, CONFLICT, ACCESS_DENIED/);
    // A look-alike object, or a caught canonical error with its fields changed, is not what escapes.
    const forged = await pool.invoke(request(`export default async (ctx) => {
      try { ctx.error('NOT_FOUND', 'A.B', 'm') } catch (e) { e.code = 'INTERNAL'; e.status = 500; throw e; }
    }`));
    assert.deepEqual(failure(forged), { kind: 'canonical', error: { code: 'NOT_FOUND', reasonCode: 'A.B', message: 'm', status: 404 } });
    const lookalike = failure(await pool.invoke(request("export default async () => { throw Object.assign(new Error('x'), { code: 'NOT_FOUND', reasonCode: 'A.B', status: 404 }) }"))) as { kind: string };
    assert.equal(lookalike.kind, 'threw');
  });

  it('a thrown Error answers its message and stack; a thrown non-Error its String()', async () => {
    const e = failure(await pool.invoke(request("export default async () => { throw new TypeError('bad input') }"))) as { kind: string; message: string; stack: string };
    assert.equal(e.kind, 'threw');
    assert.equal(e.message, 'bad input');
    assert.match(e.stack, /handler\.js/);
    assert.deepEqual(failure(await pool.invoke(request('export default async () => { throw 42 }'))), { kind: 'threw', message: '42' });
    assert.deepEqual(failure(await pool.invoke(request('export default () => { throw null }'))), { kind: 'threw', message: 'null' });
    assert.deepEqual(failure(await pool.invoke(request("export default async () => { throw { toString() { throw new Error('no') } } }"))), { kind: 'threw', message: 'a value that cannot be shown' });
  });

  it('a bundle that does not evaluate answers threw', async () => {
    const o = await pool.invoke({ ...request('export default () => 1'), code: 'var __plinthHandler = (() => { throw new Error("at load") })();' });
    assert.deepEqual(failure(o), { kind: 'threw', message: 'at load', stack: (failure(o) as { stack: string }).stack });
  });

  it('ctx carries the plain members: id, actor, correlationId, publicationVersion and the surface extras', async () => {
    const ctx = context('CoreHandler', { id: 'row-9', extra: { run: { attempt: 2 } } });
    const o = await pool.invoke(request(`export default async (ctx) => ({
      id: ctx.id, actor: ctx.actor, correlationId: ctx.correlationId, publicationVersion: ctx.publicationVersion, run: ctx.run,
      platform: typeof ctx.platform,
    })`, { ctx }));
    assert.deepEqual(value(o), { id: 'row-9', actor: { subjectId: 'u1', roles: ['member'], claims: { tier: 'gold' } }, correlationId: 'corr-1', publicationVersion: 7, run: { attempt: 2 }, platform: 'undefined' });
  });

  it('ctx.platform exists for a ManagementHandler only, as platform.<area>.<method> host calls', async () => {
    const host = new TestHost((c) => ({ ok: true, value: c.target }));
    const o = await pool.invoke(request('export default async (ctx) => ctx.platform.branches.list({ pageSize: 5 })', { host, ctx: context('ManagementHandler') }));
    assert.equal(value(o), 'platform.branches.list');
    assert.deepEqual(host.calls, [{ target: 'platform.branches.list', args: [{ pageSize: 5 }] }]);
  });

  it('ctx.log calls reach the host, awaited or not, before the outcome', async () => {
    const host = new TestHost(() => ({ ok: true, value: null }));
    const o = await pool.invoke(request("export default async (ctx) => { ctx.log.info('hello', { n: 1 }); ctx.log.warn('careful'); ctx.log.error('bad'); return 'done'; }", { host }));
    assert.equal(value(o), 'done');
    assert.deepEqual(host.calls, [
      { target: 'log.info', args: ['hello', { n: 1 }] }, { target: 'log.warn', args: ['careful'] }, { target: 'log.error', args: ['bad'] },
    ]);
  });

  it('ctx.fetch answers a fetch-like response', async () => {
    const host = new TestHost(() => ({ ok: true, value: { status: 201, headers: { 'Content-Type': 'application/json' }, body: '{"made":true}' } }));
    const o = await pool.invoke(request(`export default async (ctx) => {
      const r = await ctx.fetch('https://api.example.com/things', { method: 'POST', body: '{}' });
      return { status: r.status, ok: r.ok, type: r.headers.get('content-type'), json: await r.json(), text: await r.text() };
    }`, { host }));
    assert.deepEqual(value(o), { status: 201, ok: true, type: 'application/json', json: { made: true }, text: '{"made":true}' });
    assert.deepEqual(host.calls, [{ target: 'fetch', args: ['https://api.example.com/things', { method: 'POST', body: '{}' }] }]);
  });

  it('has no host globals: process, require, setTimeout, fetch are undefined; Date.now and Math.random work', async () => {
    const o = await pool.invoke(request(`export default async () => ({
      process: typeof process, require: typeof require, setTimeout: typeof setTimeout, setInterval: typeof setInterval,
      fetch: typeof fetch, queueMicrotask: typeof queueMicrotask, WebAssembly: typeof WebAssembly, console: typeof console,
      host: typeof host, now: Date.now() > 1.7e12, random: Math.random() < 1,
    })`));
    assert.deepEqual(value(o), {
      process: 'undefined', require: 'undefined', setTimeout: 'undefined', setInterval: 'undefined', fetch: 'undefined', queueMicrotask: 'undefined',
      WebAssembly: 'undefined', console: 'undefined', host: 'undefined', now: true, random: true,
    });
  });

  it('a handler that reaches for the host by other routes gets nothing', async () => {
    const o = await pool.invoke(request(`export default async (ctx) => {
      const F = (() => {}).constructor;
      return [F('return typeof process')(), typeof F('return this')().process, Object.keys(globalThis).filter((k) => k !== '__plinthHandler')];
    }`));
    assert.deepEqual(value(o), ['undefined', 'undefined', []]);
  });

  it('answers resultInvalid for a result over 4 MiB or one that is not JSON', async () => {
    const big = failure(await pool.invoke(request("export default async () => 'x'.repeat(10 * 1024 * 1024)"))) as { kind: string; message: string };
    assert.equal(big.kind, 'resultInvalid');
    assert.match(big.message, /larger than 4194304 bytes/);
    // Under 4 Mi UTF-16 units but over 4 MiB of UTF-8: the bytes decide.
    assert.equal((failure(await pool.invoke(request("export default async () => 'é'.repeat(3 * 1024 * 1024)"))) as { kind: string }).kind, 'resultInvalid');
    const cyclic = failure(await pool.invoke(request('export default async () => { const a = {}; a.a = a; return a; }'))) as { kind: string; message: string };
    assert.equal(cyclic.kind, 'resultInvalid');
    assert.equal((failure(await pool.invoke(request('export default async () => () => 1'))) as { kind: string }).kind, 'resultInvalid');
    assert.equal((failure(await pool.invoke(request('export default async () => 10n'))) as { kind: string }).kind, 'resultInvalid');
  });

  it('invocations are isolated: a global one sets is not seen by the next', async () => {
    const set = request('export default async () => { globalThis.leak = 1; Object.prototype.polluted = true; Array.prototype.push = null; return 1; }');
    const read = request("export default async () => [typeof leak, 'polluted' in {}, typeof [].push]");
    for (let i = 0; i < 4; i++) {
      assert.equal(value(await pool.invoke(set)), 1);
      assert.deepEqual(value(await pool.invoke(read)), ['undefined', false, 'function']);
    }
  });
});
