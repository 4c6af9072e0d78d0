/**
 * How long the audit writer's 500-row flush and a retention DELETE batch
 * hold the database, on PGlite (one connection: a request's query waits
 * behind them) and on PostgreSQL. Three INSERT shapes: one parameter per
 * value (8 × 500 = 4,000 parameters), one jsonb parameter unpacked by
 * jsonb_to_recordset, and eight array parameters unpacked by unnest.
 * Figures go to docs/performance.md ("Evidence retention and the audit path").
 *
 *   node dist/bench/audit/flush.js                      # PGlite only
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node dist/bench/audit/flush.js
 *   BENCH_DROP_AT_INDEX=1 …                            # the same without the retention index on audit.at
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { migratePlatform, PgClient, PgliteClient, type SqlClient } from '../../storage/index.js';
import type { AuditRow } from '../../runtime/pipeline/evidence.js';

const ROWS = 500;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const WARMUP = 10;

const rows = (): AuditRow[] => {
  const tenant = randomUUID();
  const project = randomUUID();
  return Array.from({ length: ROWS }, (_, i) => ({
    at: Date.now(), usage: i % 3 === 0 ? { kind: 'write.monthly', quantity: 1, dimensions: { entity: 'Order' } } : { kind: 'read.monthly', quantity: 1, dimensions: { entity: 'Order' } },
    correlationId: randomBytes(13).toString('hex'), tenantId: tenant, projectId: project, actor: `user:${randomUUID()}`,
    operationId: i % 3 === 0 ? 'Entity.Order.Create' : 'Entity.Order.Get', decision: 'Allow', reasonCode: 'Ok', status: 200,
    stage: 6, evaluatedFilter: null, fieldMasks: [], details: null,
  }) as AuditRow);
};

type Shape = (db: SqlClient, batch: AuditRow[]) => Promise<unknown>;

const COLS = 'correlation_id, tenant_id, project_id, actor, operation_id, decision, reason_code, status';

const SHAPES: Record<string, Shape> = {
  'params (4,000)': (db, batch) => {
    const values: unknown[] = [];
    const tuples = batch.map((r, i) => {
      values.push(r.correlationId, r.tenantId, r.projectId, r.actor, r.operationId, r.decision, r.reasonCode, r.status);
      const b = i * 8;
      return `($${b + 1}, $${b + 2}::uuid, $${b + 3}::uuid, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8})`;
    });
    return db.query(`INSERT INTO plinth.audit (${COLS}) VALUES ${tuples.join(', ')}`, values);
  },
  'jsonb_to_recordset (1)': (db, batch) =>
    db.query(
      `INSERT INTO plinth.audit (${COLS}) SELECT ${COLS} FROM jsonb_to_recordset($1::jsonb)
       AS x(correlation_id text, tenant_id uuid, project_id uuid, actor text, operation_id text, decision text, reason_code text, status int)`,
      [JSON.stringify(batch.map((r) => ({ correlation_id: r.correlationId, tenant_id: r.tenantId, project_id: r.projectId, actor: r.actor, operation_id: r.operationId, decision: r.decision, reason_code: r.reasonCode, status: r.status })))],
    ),
  'unnest (8 arrays)': (db, batch) =>
    db.query(
      `INSERT INTO plinth.audit (${COLS}) SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[])`,
      [batch.map((r) => r.correlationId), batch.map((r) => r.tenantId), batch.map((r) => r.projectId), batch.map((r) => r.actor),
        batch.map((r) => r.operationId), batch.map((r) => r.decision), batch.map((r) => r.reasonCode), batch.map((r) => r.status)],
    ),
};

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (ms: number): string => ms.toFixed(2);

interface Sample { flush: number[]; behind: number[]; stall: number[] }

/** Longest gap between two turns of the event loop while `work` runs (PGlite runs in this thread). */
async function longestStall<T>(work: () => Promise<T>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  let done = false;
  const turn = (): void => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (!done) setImmediate(turn);
  };
  setImmediate(turn);
  await work();
  done = true;
  await new Promise((r) => setImmediate(r));
  return Math.max(longest, performance.now() - last);
}

/**
 * Every shape × chunk size in turn within each round (so the machine's drifting background
 * load weighs the same on all): a flush of 500 rows in chunks of `chunk`, each chunk awaited
 * and followed by a turn of the event loop, as the writer does. Measured: the whole flush;
 * a `SELECT 1` sent right behind the first chunk (a request already waiting on the
 * connection); and the longest event-loop stall (on PGlite a statement runs in this thread,
 * so nothing else, not even reading a request off a socket, happens during it).
 */
async function measure(db: SqlClient, chunks: number[]): Promise<Map<string, Sample>> {
  const out = new Map<string, Sample>();
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    for (const [name, shape] of Object.entries(SHAPES)) {
      for (const chunk of chunks) {
        const key = `${name} | ${chunk}`;
        const s = out.get(key) ?? { flush: [], behind: [], stall: [] };
        out.set(key, s);
        const batch = rows();
        const t0 = performance.now();
        let behind: Promise<number> | null = null;
        let tf = 0;
        const stall = await longestStall(async () => {
          for (let k = 0; k < batch.length; k += chunk) {
            const q = shape(db, batch.slice(k, k + chunk));
            behind ??= db.query('SELECT 1').then(() => performance.now() - t0);
            await q;
            if (k + chunk < batch.length) await new Promise((r) => setImmediate(r));
          }
          tf = performance.now() - t0;
        });
        const tq = await behind!;
        if (i >= WARMUP) {
          s.flush.push(tf);
          s.behind.push(tq);
          s.stall.push(stall);
        }
      }
    }
  }
  return out;
}

/** One retention batch (migration 6's index on `at`), on a table of `fill` expired rows. */
async function deleteBatch(db: SqlClient, batchRows: number): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < 8; i++) {
    const t0 = performance.now();
    await db.query(`DELETE FROM plinth.audit WHERE seq IN (SELECT seq FROM plinth.audit WHERE at < now() - ($1::bigint * interval '1 millisecond') ORDER BY at LIMIT ${batchRows}) AND at < now() - ($1::bigint * interval '1 millisecond')`, [86_400_000]);
    times.push(performance.now() - t0);
  }
  return { p50: pct(times, 50), p95: pct(times, 95) };
}

async function run(label: string, db: SqlClient): Promise<void> {
  await migratePlatform(db);
  // BENCH_DROP_AT_INDEX=1: without migration 6's index on audit.at, to see what it costs a flush.
  if (process.env.BENCH_DROP_AT_INDEX === '1') await db.query('DROP INDEX plinth.audit_at_idx');
  console.log(`\n## ${label}: ${ROUNDS} flushes of ${ROWS} rows per shape and chunk size (after ${WARMUP} warm-up)`);
  console.log('| shape | rows per INSERT | whole flush p50 ms | p95 ms | SELECT 1 sent behind it p50 ms | p95 ms | longest event-loop stall p50 ms | p95 ms |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [key, m] of await measure(db, [100, 250, 500])) {
    console.log(`| ${key} | ${fmt(pct(m.flush, 50))} | ${fmt(pct(m.flush, 95))} | ${fmt(pct(m.behind, 50))} | ${fmt(pct(m.behind, 95))} | ${fmt(pct(m.stall, 50))} | ${fmt(pct(m.stall, 95))} |`);
  }
  await db.query(`INSERT INTO plinth.audit (at, ${COLS}) SELECT now() - interval '40 days', md5(g::text), NULL, NULL, 'bench', 'Entity.Order.Get', 'Allow', 'Ok', 200 FROM generate_series(1, 200000) g`);
  console.log(`\nretention DELETE batch (200k expired rows in the table):`);
  console.log('| rows per DELETE | p50 ms | p95 ms |');
  console.log('|---:|---:|---:|');
  for (const n of [1000, 5000]) {
    const d = await deleteBatch(db, n);
    console.log(`| ${n} | ${fmt(d.p50)} | ${fmt(d.p95)} |`);
  }
}

async function main(): Promise<void> {
  const lite = await PgliteClient.open(undefined);
  try {
    await run('PGlite (in memory)', lite);
  } finally {
    await lite.close();
  }
  const url = process.env.BENCH_DATABASE_URL;
  if (url === undefined) return;
  const name = `plinth_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const db = new PgClient({ connectionString: u.toString(), max: 4 });
  try {
    await run('PostgreSQL 15 (loopback)', db);
  } finally {
    await db.close();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
}

void main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
