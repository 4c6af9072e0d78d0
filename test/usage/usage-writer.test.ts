/**
 * The usage write path (docs/usage.md): BufferedUsageWriter writes a flush as
 * unnest() INSERTs in statements of at most 100 rows on PGlite and 500 on
 * PostgreSQL, keeps dimensions and quantities intact, keeps a batch across a
 * lost connection and writes it on the next flush, and a quota's window sum
 * (usageSince) counts what was written. Usage carried by audit rows (platform
 * migration 18) is summed and rolled up with the events, each source from
 * its own index, and the rollup's audit mark passes rows without usage.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../runtime/log.js';
import type { UsageEvent } from '../../runtime/services.js';
import { BufferedUsageWriter } from '../../runtime/usage/usage-writer.js';
import { BufferedAuditWriter } from '../../runtime/pipeline/audit-writer.js';
import { rollUpUsage } from '../../runtime/usage/rollup.js';
import { usageInWindow, usageSince } from '../../runtime/usage/usage-store.js';
import { nextWindowStart, windowStart } from '../../runtime/usage/windows.js';
import { migratePlatform, PgClient, PgliteClient, type SqlClient } from '../../storage/index.js';
import { createTestDatabase, forEachBackend, type Backend } from '../support/server.js';

const silent: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => silent };

const event = (projectId: string, i: number, extra: Partial<UsageEvent> = {}): UsageEvent => ({
  tenantId: randomUUID(), projectId, kind: 'read.monthly', quantity: 1, at: new Date().toISOString(),
  operationId: 'Entity.Doc.List', correlationId: `c-${i}`, ...extra,
});

forEachBackend('usage writer', (backend: Backend) => {
  let db: SqlClient;
  let drop: (() => Promise<void>) | null = null;
  before(async () => {
    if (backend === 'pglite') db = await PgliteClient.open(undefined);
    else {
      const t = await createTestDatabase();
      drop = t.drop;
      db = new PgClient({ connectionString: t.url, max: 2 });
    }
    await migratePlatform(db);
  });
  after(async () => {
    await db.close();
    await drop?.();
  });

  const count = async (projectId: string): Promise<number> =>
    Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM plinth.usage_events WHERE project_id = $1`, [projectId])).rows[0]!.n);

  it('writes a 500-event flush in bounded statements', async () => {
    const statements: number[] = [];
    const wrapped: SqlClient = Object.create(db);
    wrapped.query = async (sql, params) => {
      const res = await db.query(sql, params);
      if (/INSERT INTO plinth\.usage_events/.test(sql)) statements.push(res.rowCount);
      return res as never;
    };
    const w = new BufferedUsageWriter(wrapped, silent);
    const project = randomUUID();
    for (let i = 0; i < 500; i++) w.record(event(project, i));
    await w.flush();
    const per = backend === 'pglite' ? 100 : 500;
    assert.deepEqual(statements, Array.from({ length: 500 / per }, () => per));
    assert.equal(await count(project), 500);
  });

  it('keeps quantities, instants and awkward dimensions intact', async () => {
    const w = new BufferedUsageWriter(db, silent);
    const project = randomUUID();
    const at = '2026-03-04T05:06:07.089Z';
    w.record(event(project, 1, { kind: 'write.monthly', quantity: 1000, at, dimensions: { entity: `it's "quoted" {x}, \\ ünï 🙂` } }));
    w.record(event(project, 2, { quantity: 3 }));
    await w.flush();
    const rows = (await db.query<{ kind: string; q: string; at: Date | string; d: unknown }>(
      `SELECT kind, quantity::text AS q, at, dimensions AS d FROM plinth.usage_events WHERE project_id = $1 ORDER BY id`, [project],
    )).rows;
    assert.deepEqual(rows.map((r) => [r.kind, Number(r.q), r.d]), [['write.monthly', 1000, { entity: `it's "quoted" {x}, \\ ünï 🙂` }], ['read.monthly', 3, null]]);
    assert.equal(new Date(rows[0]!.at).toISOString(), at);
  });

  it('keeps a batch across a lost connection and writes it on the next flush', async () => {
    let fail = true;
    const wrapped: SqlClient = Object.create(db);
    wrapped.query = async (sql, params) => {
      if (fail && /INSERT INTO plinth\.usage_events/.test(sql)) throw new Error('Connection terminated unexpectedly');
      return db.query(sql, params) as never;
    };
    const w = new BufferedUsageWriter(wrapped, silent);
    const project = randomUUID();
    for (let i = 0; i < 7; i++) w.record(event(project, i));
    await w.flush();
    assert.equal(await count(project), 0);
    assert.equal(w.unflushed().length, 7, 'the events wait in the buffer');
    fail = false;
    await w.flush();
    assert.equal(await count(project), 7);
    assert.equal(w.unflushed().length, 0);
  });

  it('sums a window for quotas: usageSince counts events at or after the start, per kind and dimensions', async () => {
    const w = new BufferedUsageWriter(db, silent);
    const project = randomUUID();
    const now = new Date();
    const start = windowStart('calendar-month', now);
    const before = new Date(start.getTime() - 1).toISOString();
    w.record(event(project, 1, { quantity: 5, at: before }));
    w.record(event(project, 2, { quantity: 2, at: start.toISOString(), dimensions: { entity: 'Doc' } }));
    w.record(event(project, 3, { quantity: 4, at: now.toISOString(), dimensions: { entity: 'Other' } }));
    w.record(event(project, 4, { kind: 'write.monthly', quantity: 9, at: now.toISOString() }));
    w.record(event(randomUUID(), 5, { quantity: 100, at: now.toISOString() }));
    await w.flush();
    assert.equal(await usageSince(db, project, 'read.monthly', start), 6);
    assert.equal(await usageSince(db, project, 'read.monthly', start, { entity: 'Doc' }), 2);
    assert.equal(await usageSince(db, project, 'write.monthly', start), 9);
    assert.equal(await usageSince(db, project, 'realtime.subscriptions', start), 0);
    assert.equal(await usageInWindow(db, project, 'read.monthly', 'calendar-month', now), 6);
    assert.equal(nextWindowStart('calendar-month', new Date('2026-12-31T23:59:59Z')).toISOString(), '2027-01-01T00:00:00.000Z');
    assert.equal(nextWindowStart('hour', new Date('2026-02-28T23:30:00Z')).toISOString(), '2026-03-01T00:00:00.000Z');
    assert.equal(windowStart('day', new Date('2026-02-28T23:30:00Z')).toISOString(), '2026-02-28T00:00:00.000Z');
  });

  /** The plan of a window sum over `table` (a test table is small enough that a sequential scan wins on cost: take it away to see which index serves it). */
  const windowSumPlan = (table: string): Promise<string> => db.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    return (await tx.query<Record<string, string>>(
      `EXPLAIN (COSTS OFF) SELECT COALESCE(sum(quantity), 0) FROM plinth.${table} WHERE project_id = $1 AND kind = $2 AND at >= $3::timestamptz`,
      [randomUUID(), 'read.monthly', new Date().toISOString()],
    )).rows.map((r) => Object.values(r)[0]).join('\n');
  });

  it('serves the window sum from the (project_id, kind, at) index', async () => {
    if (backend !== 'postgres') return; // PGlite plans the same; PostgreSQL's EXPLAIN is the reference
    const plan = await windowSumPlan('usage_events');
    assert.match(plan, /usage_events_project_kind_at_idx/, plan);
  });

  it('serves the window sum of both sources (usage_ledger) from their indexes', async () => {
    if (backend !== 'postgres') return;
    const plan = await windowSumPlan('usage_ledger');
    assert.match(plan, /usage_events_project_kind_at_idx/, plan);
    assert.match(plan, /audit_usage_idx/, plan);
  });

  it('sums and rolls up usage carried by audit rows; the audit mark passes rows without usage', async () => {
    const project = randomUUID();
    const audit = new BufferedAuditWriter(db, silent);
    const at = Date.now();
    for (let i = 0; i < 30; i++) {
      audit.record({
        at, correlationId: `r-${project}-${i}`, tenantId: null, projectId: project, actor: 'a', operationId: 'Entity.Doc.List', decision: 'Allow',
        reasonCode: 'Access.Allowed', status: 200, stage: 6, evaluatedFilter: null, fieldMasks: [], details: null,
        usage: i % 5 === 0 ? { kind: 'read.monthly', quantity: 2, dimensions: { entity: 'Doc' } } : null,
      });
    }
    await audit.flush();
    const w = new BufferedUsageWriter(db, silent);
    for (let i = 0; i < 3; i++) w.record(event(project, 100 + i, { dimensions: { entity: 'Doc' } }));
    await w.flush();
    assert.equal(await usageSince(db, project, 'read.monthly', new Date(at - 1000)), 6 * 2 + 3);
    assert.equal(await usageSince(db, project, 'read.monthly', new Date(at - 1000), { entity: 'Doc' }), 15);
    // Batches of 2 events and windows of 8 audit rows: several batches, each bounded.
    const run = await rollUpUsage(db, { batchRows: 2, pauseMs: 0, budgetMs: 60_000 });
    assert.ok(run.batches >= 4, `batches: ${run.batches}`);
    const total = await db.query<{ q: string }>(
      `SELECT sum(quantity)::text AS q FROM plinth.usage_rollups WHERE project_id = $1 AND time_window = 'calendar-month' AND kind = 'read.monthly'`, [project],
    );
    assert.equal(total.rows[0]!.q, '15');
    const marks = await db.query<{ a: string; e: string; maxa: string; maxe: string }>(
      `SELECT last_audit_seq::text AS a, last_id::text AS e, (SELECT max(seq) FROM plinth.audit)::text AS maxa, (SELECT max(id) FROM plinth.usage_events)::text AS maxe
       FROM plinth.usage_rollup_cursor WHERE id = 1`,
    );
    assert.equal(marks.rows[0]!.a, marks.rows[0]!.maxa, 'the audit mark is past every audit row, with usage or not');
    assert.equal(marks.rows[0]!.e, marks.rows[0]!.maxe);
    const again = await rollUpUsage(db, { batchRows: 2, pauseMs: 0, budgetMs: 60_000 });
    assert.deepEqual([again.rolled, again.batches], [0, 1]);
  });
});
