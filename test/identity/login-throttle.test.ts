/** LoginThrottle and HashGate on a fake clock: lockout growth, address window, bounds. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LoginThrottle, HashGate } from '../../runtime/identity/index.js';
import { ServiceError } from '../../runtime/errors/service-error.js';

const MIN = 60_000;

describe('LoginThrottle', () => {
  it('locks an account after the failures, doubles each lockout, and forgets on success', () => {
    let now = 0;
    const t = new LoginThrottle({ accountMaxFailures: 3, accountWindowMs: 15 * MIN, lockoutBaseMs: MIN, addressMaxFailures: 1000, addressWindowMs: MIN }, () => now);
    const fail = (n: number) => { for (let i = 0; i < n; i++) t.failed('a', '1.2.3.4'); };
    fail(2);
    assert.equal(t.retryAfterMs('a', '1.2.3.4'), 0);
    fail(1);
    assert.equal(t.retryAfterMs('a', null), MIN);
    assert.equal(t.retryAfterMs('b', null), 0, 'other accounts are not locked');
    now += MIN;
    fail(3);
    assert.equal(t.retryAfterMs('a', null), 2 * MIN);
    now += 2 * MIN;
    fail(3);
    assert.equal(t.retryAfterMs('a', null), 4 * MIN);
    now += 4 * MIN;
    for (let i = 0; i < 4; i++) { fail(3); now += 15 * MIN; }
    t.failed('a', null); t.failed('a', null); t.failed('a', null);
    assert.ok(t.retryAfterMs('a', null) <= 15 * MIN, 'capped at the window');
    t.succeeded('a');
    assert.equal(t.retryAfterMs('a', null), 0);
  });

  it('counts attempts in flight toward the account limit, so a concurrent burst cannot pass it', () => {
    const t = new LoginThrottle({ accountMaxFailures: 3, accountWindowMs: MIN, lockoutBaseMs: MIN, addressMaxFailures: 1000, addressWindowMs: MIN });
    assert.deepEqual([t.begin('a', null), t.begin('a', null), t.begin('a', null)], [null, null, null]);
    assert.deepEqual(t.begin('a', null), { waitMs: 1000, limit: 3, scope: 'account' });
    assert.equal(t.begin('b', null), null);
    t.failed('a', null); t.end('a');
    assert.equal(t.begin('a', null)?.waitMs, 1000);
    t.end('a'); t.end('a');
    assert.equal(t.begin('a', null), null);
  });

  it('blocks a client address for the rest of its window', () => {
    let now = 0;
    const t = new LoginThrottle({ accountMaxFailures: 1000, accountWindowMs: MIN, lockoutBaseMs: MIN, addressMaxFailures: 5, addressWindowMs: MIN }, () => now);
    for (let i = 0; i < 5; i++) t.failed(`acct${i}`, '10.0.0.1');
    now += 10_000;
    assert.equal(t.retryAfterMs('fresh', '10.0.0.1'), 50_000);
    assert.equal(t.retryAfterMs('fresh', '10.0.0.2'), 0);
    now += 50_000;
    assert.equal(t.retryAfterMs('fresh', '10.0.0.1'), 0);
  });

  it('keeps at most maxEntries accounts', () => {
    const t = new LoginThrottle({ accountMaxFailures: 1, accountWindowMs: MIN, lockoutBaseMs: MIN, addressMaxFailures: 1000, addressWindowMs: MIN, maxEntries: 10 });
    for (let i = 0; i < 100; i++) t.failed(`acct${i}`, null);
    assert.equal(t.retryAfterMs('acct0', null), 0, 'the oldest entry was dropped');
    assert.ok(t.retryAfterMs('acct99', null) > 0);
  });
});

describe('HashGate', () => {
  it('runs at most `concurrency` at once and refuses past the queue with a retryable 503', async () => {
    const gate = new HashGate(2, 2);
    let running = 0;
    let peak = 0;
    const releases: Array<() => void> = [];
    const job = () => gate.run(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => releases.push(r));
      running--;
    });
    const jobs = [job(), job(), job(), job()];
    await assert.rejects(job(), (err: unknown) => ServiceError.is(err) && err.code === 'UNAVAILABLE' && err.reasonCode === 'Identity.Busy' && err.retryable);
    while (releases.length > 0 || running > 0) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    await Promise.all(jobs);
    assert.equal(peak, 2);
    assert.deepEqual(gate.load, { active: 0, waiting: 0 });
  });

  it('queues 16 per running hash by default: at 2^17 the last one waits ~16 hash times, not a minute', async () => {
    const gate = new HashGate(1);
    const releases: Array<() => void> = [];
    const job = () => gate.run(() => new Promise<void>((r) => releases.push(r)));
    const jobs = Array.from({ length: 17 }, job);
    assert.deepEqual(gate.load, { active: 1, waiting: 16 });
    await assert.rejects(job(), (err: unknown) => ServiceError.is(err) && err.reasonCode === 'Identity.Busy');
    while (releases.length > 0 || gate.load.active > 0) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    await Promise.all(jobs);
  });
});
