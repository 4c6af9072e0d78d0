/**
 * The sandbox's limits are the engine's (CONTRACT "Sandbox and limits"): an
 * infinite loop stops at its CPU limit with a small overshoot, an allocation
 * bomb at its memory cap (and the pool goes on), deep recursion is an
 * ordinary throw, a promise that never settles ends at the wall-clock limit,
 * and a flood of host calls ends in a typed failure.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSandboxPool, MAX_HOST_CALLS } from '../../runtime/authored/sandbox/index.js';
import type { AuthoredPool } from '../../runtime/authored/types.js';
import { percentile, request, TestHost } from './sandbox-support.js';

let pool: AuthoredPool;
before(() => {
  pool = createSandboxPool({ workers: 2 });
});
after(() => pool.close());

describe('sandbox pool: limits', () => {
  it('an infinite loop under cpuMs 50 stops with cpuLimit, having used at most 60 ms (p99 of 20 runs)', async () => {
    const used: number[] = [];
    for (let i = 0; i < 20; i++) {
      const o = await pool.invoke(request('export default async () => { while (true) {} }', { limits: { cpuMs: 50 } }));
      assert.ok(!o.ok);
      assert.deepEqual(o.failure, { kind: 'cpuLimit' });
      assert.ok(o.usage.cpuMs >= 50, `stopped early: ${o.usage.cpuMs} ms`);
      used.push(o.usage.cpuMs);
    }
    const p99 = percentile(used, 0.99);
    assert.ok(p99 <= 60, `CPU used by a 50 ms loop, p99 ${p99} ms (all: ${used.join(', ')})`);
  });

  it('a loop spread over promise jobs and host calls is counted the same way', async () => {
    const host = new TestHost(() => ({ ok: true, value: 1 }));
    const o = await pool.invoke(request('export default async (ctx) => { for (;;) { await ctx.db.x.count({}); for (let i = 0; i < 1e5; i++); } }', { host, limits: { cpuMs: 100 } }));
    assert.ok(!o.ok);
    assert.deepEqual(o.failure, { kind: 'cpuLimit' });
    assert.ok(host.calls.length > 1);
  });

  it('an allocation bomb stops with memoryLimit under the engine cap, and the next invocation on the pool works', async () => {
    for (const bomb of [
      'export default async () => { const a = []; for (;;) a.push("x".repeat(100000) + a.length); }',
      'export default async () => { const a = []; for (;;) a.push(new ArrayBuffer(1 << 20)); }',
      'export default async () => { const a = []; for (;;) a.push({ a: 1, b: [1, 2, 3] }); }',
    ]) {
      const o = await pool.invoke(request(bomb, { limits: { memoryMiB: 32, cpuMs: 10_000 } }));
      assert.ok(!o.ok, bomb);
      assert.deepEqual(o.failure, { kind: 'memoryLimit' }, bomb);
      assert.ok(o.usage.peakMemoryBytes <= 32 * 1024 * 1024, `engine memory ${o.usage.peakMemoryBytes} over the 32 MiB cap`);
      const next = await pool.invoke(request('export default async (ctx, input) => input + 1', { input: 1, limits: { memoryMiB: 32 } }));
      assert.deepEqual(next.ok && next.value, 2);
    }
  });

  it('a handler that catches out of memory and rethrows it is still at its memory limit', async () => {
    const o = await pool.invoke(request('export default async () => { try { const a = []; for (;;) a.push(new ArrayBuffer(1 << 20)); } catch (e) { throw e; } }', { limits: { memoryMiB: 32 } }));
    assert.ok(!o.ok);
    assert.deepEqual(o.failure, { kind: 'memoryLimit' });
  });

  it('deep recursion is a throw (stack overflow), not a crash', async () => {
    const o = await pool.invoke(request('export default async () => { const f = (n) => f(n + 1) + 1; return f(0); }'));
    assert.ok(!o.ok);
    assert.equal(o.failure.kind, 'threw');
    assert.match((o.failure as { message: string }).message, /stack overflow/);
    const next = await pool.invoke(request('export default async () => "fine"'));
    assert.deepEqual(next.ok && next.value, 'fine');
  });

  it('a promise that never settles ends at the wall-clock limit', async () => {
    // Waiting on a host call that never answers: the wall clock runs out.
    const host = new TestHost(() => new Promise(() => {}));
    const waiting = await pool.invoke(request('export default async (ctx) => { await ctx.db.orders.get(1); return 1; }', { host, limits: { wallMs: 300 } }));
    assert.ok(!waiting.ok);
    assert.deepEqual(waiting.failure, { kind: 'wallClockLimit' });
    assert.ok(waiting.usage.wallMs >= 300 && waiting.usage.wallMs < 1_000, `wall ${waiting.usage.wallMs} ms`);
    // Nothing in flight and no timers in the sandbox: it can never settle, so it ends at once.
    const never = await pool.invoke(request('export default () => new Promise(() => {})', { limits: { wallMs: 5_000 } }));
    assert.ok(!never.ok);
    assert.deepEqual(never.failure, { kind: 'wallClockLimit' });
    assert.ok(never.usage.wallMs < 1_000);
  });

  it('100,000 host calls in a loop end in a typed failure after the per-invocation cap, with at most 16 in flight', async () => {
    const host = new TestHost(() => ({ ok: true, value: null }));
    const o = await pool.invoke(request('export default async (ctx) => { for (let i = 0; i < 100000; i++) await ctx.db.things.get(i); return "all"; }', { host, limits: { cpuMs: 30_000, wallMs: 60_000 } }));
    assert.ok(!o.ok);
    assert.deepEqual(o.failure, { kind: 'canonical', error: { code: 'QUOTA_EXCEEDED', reasonCode: 'Handler.HostCallLimit', status: 429, message: `an invocation may make at most ${MAX_HOST_CALLS} host calls` } });
    assert.equal(host.calls.length, MAX_HOST_CALLS);
    // A flood all at once: queued in the worker, never more than 16 at the host, the calls past the cap refused.
    const burst = new TestHost(() => new Promise((r) => setImmediate(() => r({ ok: true, value: null }))));
    const b = await pool.invoke(request('export default async (ctx) => { const all = []; for (let i = 0; i < 20000; i++) all.push(ctx.db.things.get(i).catch((e) => e.reasonCode)); return (await Promise.all(all)).filter((x) => x === "Handler.HostCallLimit").length; }', { host: burst, limits: { cpuMs: 30_000, wallMs: 60_000 } }));
    assert.deepEqual(b.ok && b.value, 20_000 - MAX_HOST_CALLS);
    assert.equal(burst.calls.length, MAX_HOST_CALLS);
    assert.ok(burst.maxInFlight <= 16, `in flight at the host: ${burst.maxInFlight}`);
  });
});
