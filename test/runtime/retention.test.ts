/**
 * Evidence retention (docs/retention.md): the ObservabilityDrainAudit and
 * StagingTtlSweeper operator actors delete expired audit rows, projected
 * events, idempotency keys and finished webhook deliveries in bounded
 * batches, keep what is inside the window or still needed, and keep
 * everything when a retention is 0. Old rows are written with SQL and an
 * explicit timestamp (the sweep compares with the database clock).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { bootstrapProject } from '../support/client.js';
import type { WebhookDispatcher } from '../../runtime/webhooks/outbound/dispatcher.js';
import { retentionRules } from '../../runtime/retention/rules.js';
import { sweepRule } from '../../runtime/retention/sweep.js';

const P = 'plinth';
const ago = (sql: string): string => `now() - interval '${sql}'`;

async function count(s: TestServer, table: string, where = 'true'): Promise<number> {
  return Number((await s.node.services.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${P}.${table} WHERE ${where}`)).rows[0]!.n);
}

/** `n` audit rows at `at`, tagged so the test counts only its own. */
async function auditRows(s: TestServer, n: number, at: string, tag: string): Promise<void> {
  await s.node.services.db.query(
    `INSERT INTO ${P}.audit (at, correlation_id, actor, operation_id, decision, reason_code, status)
     SELECT ${at}, $1, 'test', 'Test.Op', 'Allow', 'Ok', 200 FROM generate_series(1, ${n})`, [tag],
  );
}

/** `n` projected events at `at`; returns their seqs in order. */
async function eventRows(s: TestServer, n: number, at: string, tag: string): Promise<string[]> {
  const seqs: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await s.node.services.db.query<{ seq: string }>(
      `INSERT INTO ${P}.events (id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
       VALUES ($1, 'test.happened', $2, $2, NULL, $3, 1, ${at}, '{}'::jsonb) RETURNING seq`, [randomUUID(), randomUUID(), tag],
    );
    seqs.push(r.rows[0]!.seq);
  }
  return seqs;
}

async function idempotencyRow(s: TestServer, at: string, tag: string): Promise<void> {
  await s.node.services.db.query(
    `INSERT INTO ${P}.idempotency_keys (project_id, branch, operation_id, key, request_hash, status, body, created_at)
     VALUES ($1, 'main', $2, $3, 'h', 201, '{}'::jsonb, ${at})`, [randomUUID(), tag, randomUUID()],
  );
}

/** An endpoint (with its secret row) to hang delivery rows on. */
async function endpoint(s: TestServer): Promise<string> {
  const db = s.node.services.db;
  const secret = randomUUID();
  const id = randomUUID();
  await db.query(`INSERT INTO ${P}.secrets (id, sealed) VALUES ($1, 'x')`, [secret]);
  await db.query(
    `INSERT INTO ${P}.webhook_endpoints (id, tenant_id, project_id, url, max_attempts, base_delay_ms, secret_id)
     VALUES ($1, $2, $2, 'http://127.0.0.1:9/none', 3, 1000, $3)`, [id, randomUUID(), secret],
  );
  return id;
}

async function delivery(s: TestServer, endpointId: string, state: string, at: string): Promise<void> {
  await s.node.services.db.query(
    `INSERT INTO ${P}.webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, payload, state, attempt_limit, next_attempt_at, updated_at, created_at)
     VALUES ($1, $2, $3, $4, 'test.happened', '{}'::jsonb, $5, 3, ${state === 'Pending' ? 'now() + interval \'1 day\'' : 'now()'}, ${at}, ${at})`,
    [randomUUID(), randomUUID(), endpointId, randomUUID(), state],
  );
}

/** Holds the webhook router still, so the test decides how far it has read the events table. */
async function stopRouter(s: TestServer): Promise<void> {
  await (s.node.services.webhooks as unknown as WebhookDispatcher).stop();
  // The scheduler's event router reads the same log after a cursor of its own (docs/scheduling.md "Retention").
  s.node.scheduler.stop();
}

/** Both readers of the event log (the webhook router, the scheduler's event router) have read up to `seq`. */
async function setRouterCursor(s: TestServer, seq: string): Promise<void> {
  await s.node.services.db.query(`UPDATE ${P}.webhook_router_cursor SET last_seq = $1 WHERE id = 1`, [seq]);
  await s.node.services.db.query(
    `INSERT INTO ${P}.scheduler_state (name, node, last_scan_at, lag_ms, last_seq) VALUES ('events', 'test', now(), 0, $1)
     ON CONFLICT (name) DO UPDATE SET last_seq = EXCLUDED.last_seq`, [seq]);
}

// Small batches so a few dozen rows take several DELETEs; the timer is far off so only the test sweeps.
const ENV = { RETENTION_BATCH_ROWS: '10', RETENTION_BATCH_PAUSE_MS: '0', RETENTION_SWEEP_INTERVAL_MS: '3600000' };

forEachBackend('retention sweepers', (backend: Backend) => {
  describe('defaults (audit 30 d, events 7 d, idempotency 24 h, deliveries 30 d)', () => {
    let s: TestServer;
    before(async () => {
      s = await startServer({ backend, env: ENV });
      await stopRouter(s);
    });
    after(async () => s.close());

    it('deletes expired rows in batches, keeps rows inside the window, and keeps events the router has not passed', async () => {
      await auditRows(s, 35, ago('31 days'), 'old');
      await auditRows(s, 5, ago('29 days'), 'young');
      const oldRouted = await eventRows(s, 25, ago('8 days'), 'old-routed');
      const oldUnrouted = await eventRows(s, 4, ago('8 days'), 'old-unrouted');
      await eventRows(s, 3, ago('6 days'), 'young');
      await setRouterCursor(s, oldRouted[oldRouted.length - 1]!);
      for (let i = 0; i < 12; i++) await idempotencyRow(s, ago('25 hours'), 'old');
      await idempotencyRow(s, ago('23 hours'), 'young');
      const ep = await endpoint(s);
      for (let i = 0; i < 6; i++) await delivery(s, ep, i % 2 === 0 ? 'Succeeded' : 'DeadLettered', ago('31 days'));
      await delivery(s, ep, 'Pending', ago('31 days'));
      await delivery(s, ep, 'RetryScheduled', ago('31 days'));
      await delivery(s, ep, 'Succeeded', ago('29 days'));

      const r = await s.node.retention.sweepNow();
      const audit = r.ObservabilityDrainAudit.find((x) => x.rule === 'audit')!;
      assert.equal(audit.deleted, 35);
      assert.equal(audit.batches, 4, 'bounded DELETEs of RETENTION_BATCH_ROWS rows');
      assert.equal(await count(s, 'audit', `correlation_id = 'old'`), 0);
      assert.equal(await count(s, 'audit', `correlation_id = 'young'`), 5);

      assert.equal(await count(s, 'events', `correlation_id = 'old-routed'`), 0);
      assert.equal(await count(s, 'events', `correlation_id = 'old-unrouted'`), oldUnrouted.length, 'the router has not read them yet');
      assert.equal(await count(s, 'events', `correlation_id = 'young'`), 3);
      assert.equal(await count(s, 'idempotency_keys', `operation_id = 'old'`), 0);
      assert.equal(await count(s, 'idempotency_keys', `operation_id = 'young'`), 1);
      assert.equal(await count(s, 'webhook_deliveries', `state IN ('Succeeded', 'DeadLettered') AND updated_at < ${ago('30 days')}`), 0);
      assert.equal(await count(s, 'webhook_deliveries', `endpoint_id = '${ep}'`), 3, 'live deliveries and a young finished one stay');
      const staging = Object.fromEntries(r.StagingTtlSweeper.map((x) => [x.rule, x.deleted]));
      assert.deepEqual(staging, { events: 25, 'idempotency keys': 12, 'webhook deliveries': 6, 'task runs': 0, 'trigger audit': 0 });

      // Once the router passes them, they go too.
      await setRouterCursor(s, oldUnrouted[oldUnrouted.length - 1]!);
      await s.node.retention.sweepNow();
      assert.equal(await count(s, 'events', `correlation_id = 'old-unrouted'`), 0);
      assert.equal(await count(s, 'events', `correlation_id = 'young'`), 3);
    });

    it('deletes finished task runs (with their attempts) and trigger-audit rows past 30 days; queued and running runs stay', async () => {
      const project = (await bootstrapProject(s.url, s.adminToken, `ret${randomUUID().slice(0, 8)}`)).projectId;
      const run = async (state: string, finished: string | null): Promise<string> => {
        const id = randomUUID();
        await s.node.services.db.query(
          `INSERT INTO ${P}.task_runs (id, tenant_id, project_id, branch, definition_id, cause, scheduled_for, state, serial, max_attempts, correlation_id, finished_at)
           VALUES ($1, $2, $3, 'main', $4, 'manual', now(), $5, false, 1, 'retention', ${finished ?? 'NULL'})`, [id, randomUUID(), project, randomUUID(), state]);
        await s.node.services.db.query(`INSERT INTO ${P}.task_attempts (id, run_id, project_id, number, state, node, lease_until) VALUES ($1, $2, $3, 1, 'succeeded', 'n', now())`, [randomUUID(), id, project]);
        return id;
      };
      for (const state of ['succeeded', 'failed', 'cancelled']) await run(state, ago('31 days'));
      await run('succeeded', ago('29 days'));
      await run('queued', null);
      await run('running', null);
      for (const days of ['31 days', '31 days', '29 days']) {
        await s.node.services.db.query(`INSERT INTO ${P}.trigger_audit (project_id, at, definition_id, decision) VALUES ($1, ${ago(days)}, $2, 'started')`, [project, randomUUID()]);
      }
      const r = await s.node.retention.sweepNow();
      const staging = Object.fromEntries(r.StagingTtlSweeper.map((x) => [x.rule, x.deleted]));
      assert.equal(staging['task runs'], 3);
      assert.equal(staging['trigger audit'], 2);
      assert.deepEqual((await s.node.services.db.query<{ state: string }>(`SELECT state FROM ${P}.task_runs WHERE project_id = $1 ORDER BY state`, [project])).rows.map((x) => x.state), ['queued', 'running', 'succeeded']);
      assert.equal(await count(s, 'task_attempts', `project_id = '${project}'`), 3, 'the deleted runs took their attempts with them');
      assert.equal(await count(s, 'trigger_audit', `project_id = '${project}'`), 1);
    });

    it('runs each sweeper as one activation on the node', async () => {
      await s.node.retention.sweepNow();
      const byKind = s.node.retention.system.stats().byKind;
      assert.equal(byKind.ObservabilityDrainAudit, 1);
      assert.equal(byKind.StagingTtlSweeper, 1);
    });

    it('stops at its time budget with `more` set, and the next run finishes', async () => {
      await auditRows(s, 25, ago('40 days'), 'budget');
      const [rule] = retentionRules({ auditRetentionMs: 30 * 86_400_000, eventRetentionMs: 0, idempotencyRetentionMs: 0, webhookDeliveryRetentionMs: 0 });
      const first = await sweepRule(s.node.services.db, rule!, { batchRows: 10, pauseMs: 0, budgetMs: 0 });
      assert.deepEqual({ deleted: first.deleted, batches: first.batches, more: first.more }, { deleted: 10, batches: 1, more: true });
      const rest = await sweepRule(s.node.services.db, rule!, { batchRows: 10, pauseMs: 0, budgetMs: 60_000 });
      assert.deepEqual({ deleted: rest.deleted, more: rest.more }, { deleted: 15, more: false });
    });
  });

  describe('retention 0 keeps everything', () => {
    let s: TestServer;
    before(async () => {
      s = await startServer({ backend, env: { ...ENV, AUDIT_RETENTION_DAYS: '0', EVENT_RETENTION_DAYS: '0', WEBHOOK_DELIVERY_RETENTION_DAYS: '0' } });
      await stopRouter(s);
    });
    after(async () => s.close());

    it('deletes no audit row, event or delivery, however old', async () => {
      await auditRows(s, 15, ago('3650 days'), 'ancient');
      const seqs = await eventRows(s, 3, ago('3650 days'), 'ancient');
      await setRouterCursor(s, seqs[seqs.length - 1]!);
      const ep = await endpoint(s);
      await delivery(s, ep, 'Succeeded', ago('3650 days'));
      const r = await s.node.retention.sweepNow();
      assert.equal(await count(s, 'audit', `correlation_id = 'ancient'`), 15);
      assert.equal(await count(s, 'events', `correlation_id = 'ancient'`), 3);
      assert.equal(await count(s, 'webhook_deliveries', `endpoint_id = '${ep}'`), 1);
      assert.equal(r.ObservabilityDrainAudit[0]!.batches, 0, 'no DELETE is even sent');
    });
  });
});
