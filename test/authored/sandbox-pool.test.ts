/**
 * The pool as a whole (CONTRACT "Sandbox and limits"): runaway invocations
 * run on worker threads and leave the main thread's event loop free; reset()
 * replaces the workers while in-flight invocations finish on the old ones;
 * a first invocation on a started worker is cheap.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSandboxPool } from '../../runtime/authored/sandbox/index.js';
import { SandboxBusyError, type AuthoredPool, type HostAnswer } from '../../runtime/authored/types.js';
import { request, TestHost } from './sandbox-support.js';

const pools: AuthoredPool[] = [];
function pool(workers: number): AuthoredPool {
  const p = createSandboxPool({ workers });
  pools.push(p);
  return p;
}
after(() => Promise.all(pools.map((p) => p.close())));

describe('sandbox pool: workers', () => {
  it('20 runaway invocations at once leave the main thread responsive (event-loop delay p99 < 50 ms) and all stop at their CPU limit (300 ms each)', async () => {
    const p = pool(2);
    await p.invoke(request('export default () => 1'));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => p.invoke(request('export default () => { for (;;) {} }', { limits: { cpuMs: 300, wallMs: 60_000 } }))));
    delay.disable();
    for (const o of outcomes) {
      assert.ok(!o.ok);
      assert.deepEqual(o.failure, { kind: 'cpuLimit' });
    }
    const p99 = delay.percentile(99) / 1e6;
    assert.ok(p99 < 50, `event-loop delay p99 ${p99.toFixed(1)} ms`);
    // And the pool still answers.
    const next = await p.invoke(request('export default (ctx, input) => input', { input: 'after' }));
    assert.deepEqual(next.ok && next.value, 'after');
  });

  it('reset() while an invocation runs: it finishes on its old worker, and new ones run on new workers meanwhile', async () => {
    const p = pool(1);
    let release!: (a: HostAnswer) => void;
    const gate = new Promise<HostAnswer>((r) => { release = r; });
    const host = new TestHost(() => gate);
    const running = p.invoke(request('export default async (ctx) => { const r = await ctx.db.orders.get(1); return ["old", r]; }', { host, limits: { wallMs: 30_000 } }));
    while (host.calls.length === 0) await sleep(5);
    await p.reset();
    // One worker per pool: had this gone to the old worker it would wait behind the blocked invocation.
    const fresh = await p.invoke(request('export default () => "new"'));
    assert.deepEqual(fresh.ok && fresh.value, 'new');
    release({ ok: true, value: 7 });
    const old = await running;
    assert.deepEqual(old.ok && old.value, ['old', 7]);
    const again = await p.invoke(request('export default () => "again"'));
    assert.deepEqual(again.ok && again.value, 'again');
  });

  it('a full queue refuses at once with SandboxBusyError, runs nothing more, and takes invocations again once it drains', async () => {
    const p = createSandboxPool({ workers: 1, maxQueue: 2 });
    pools.push(p);
    await p.invoke(request('export default () => 1'));
    const spin = (): ReturnType<AuthoredPool['invoke']> => p.invoke(request('export default () => { for (;;) {} }', { limits: { cpuMs: 100 } }));
    const running = [spin(), spin(), spin()]; // one runs, two wait
    await sleep(20);
    await assert.rejects(spin(), SandboxBusyError);
    for (const o of await Promise.all(running)) assert.deepEqual(!o.ok && o.failure, { kind: 'cpuLimit' });
    const after = await p.invoke(request('export default () => "after"'));
    assert.deepEqual(after.ok && after.value, 'after');
  });

  it('close() ends the pool: later invocations are refused', async () => {
    const p = createSandboxPool({ workers: 1 });
    await p.close();
    await assert.rejects(p.invoke(request('export default () => 1')), /closed/);
  });

  // The 20 ms cold target is measured by bench/authored (a timed bound here would measure the machine's load):
  // this catches a worker that does its expensive set-up (wasm compile, module creation) on the first invocation.
  it('the first invocation on a started worker finds it warm (under 100 ms even on a loaded machine; bench/authored measures the 20 ms target)', async () => {
    const first: number[] = [];
    for (let i = 0; i < 3; i++) {
      const p = createSandboxPool({ workers: 1 });
      try {
        // The worker starts and warms up on its own thread; wait for it as a node does between boot and its first request.
        await sleep(1_500);
        const t = performance.now();
        const o = await p.invoke(request('export default async (ctx, input) => ({ doubled: input * 2 })', { input: i }));
        first.push(performance.now() - t);
        assert.deepEqual(o.ok && o.value, { doubled: i * 2 });
      } finally {
        await p.close();
      }
    }
    assert.ok(Math.max(...first) <= 100, `first invocation ms: ${first.map((x) => x.toFixed(1)).join(', ')}`);
  });
});
