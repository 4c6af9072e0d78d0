/**
 * Boot in cluster mode waits out NATS trouble up to NATS_STARTUP_DEADLINE_MS,
 * then exits naming the step that failed (the election case itself is
 * scenario f of faults.test.ts, on a real cluster).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { StartupDeadline, StartupStepFailed, startupStep } from '../../cluster/startup.js';
import { freePort } from '../support/nats-cluster.js';
import { startPlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase } from '../support/server.js';
import { servicesSkip } from '../support/services.js';

const timeoutError = (): Error => Object.assign(new Error('timeout'), { name: 'TimeoutError' });

describe('startupStep: one deadline for the NATS setup of a boot', () => {
  it('retries transient failures (an election) until the step succeeds', async () => {
    let calls = 0;
    const v = await startupStep('probe', new StartupDeadline(5_000, 'TEST_DEADLINE'), async () => {
      if (++calls < 3) throw timeoutError();
      return 'up';
    });
    assert.equal(v, 'up');
    assert.equal(calls, 3);
  });

  it('past the deadline, fails with a message naming the step, the deadline and its setting', async () => {
    const t0 = Date.now();
    const err = await startupStep('KV bucket x', new StartupDeadline(600, 'TEST_DEADLINE'), async () => {
      throw timeoutError();
    }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof StartupStepFailed);
    assert.match(err.message, /^cluster setup failed: KV bucket x did not succeed within 600 ms \(TEST_DEADLINE\); last error: TimeoutError: timeout$/);
    assert.ok(Date.now() - t0 < 2_000);
  });

  it('abandons an attempt that hangs past the deadline', async () => {
    const t0 = Date.now();
    const err = await startupStep('stream y', new StartupDeadline(300, 'TEST_DEADLINE'), () => new Promise(() => {})).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof StartupStepFailed);
    assert.match(err.message, /stream y did not succeed within 300 ms/);
    assert.ok(Date.now() - t0 < 1_500);
  });

  it('fails at once on an error no retry fixes', async () => {
    let calls = 0;
    const err = await startupStep('probe', new StartupDeadline(5_000, 'TEST_DEADLINE'), async () => {
      calls++;
      throw new Error('stream name already in use with a different configuration');
    }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof StartupStepFailed);
    assert.equal(calls, 1);
    assert.match(err.message, /^cluster setup failed: probe: Error: stream name already in use/);
  });
});

describe('a cluster node whose NATS never answers', { skip: servicesSkip('postgres') }, () => {
  it('exits 1 after NATS_STARTUP_DEADLINE_MS, naming the connect step', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase();
    try {
      const dead = await freePort(); // nothing listens there
      const t0 = Date.now();
      const err = await startPlinthProcess({
        databaseUrl: db.url, natsUrl: `nats://127.0.0.1:${dead}`, adminToken: `startup-${randomBytes(12).toString('hex')}`, nodeId: 'startup-probe',
        env: { NATS_STARTUP_DEADLINE_MS: '2000', GRPC_PORT: '0' },
      }).then(() => null, (e: unknown) => e as Error);
      const ms = Date.now() - t0;
      assert.ok(err !== null, 'the node must not start');
      assert.match(err.message, /exited \(code 1/);
      assert.match(err.message, /cluster setup failed: connect to NATS \(nats:\/\/127\.0\.0\.1:\d+\) did not succeed within 2000 ms \(NATS_STARTUP_DEADLINE_MS\); last error: ConnectionError/);
      assert.ok(ms >= 2_000, `it waited for the deadline (${ms} ms)`);
    } finally {
      await db.drop();
    }
  });
});
