/**
 * WAL and database CPU per create (bench W3), independent of the machine's load:
 * a scratch database gets the platform schema and an `Order` table; 10
 * connections send the statements a create sends, while one
 * `synchronous_commit = off` connection runs the embedded outbox move in a
 * loop and an audit flush every 50 ms, as a node does. Then:
 * - WAL per create: pg_walinspect's records over the run's LSN range,
 *   attributed to this database's relations by their block reference;
 * - backend CPU per create: user + system time of this database's backends
 *   (/proc/<pid>/stat; the database must run on this machine).
 * Variants: `bare` (the baseline's INSERT), `before` (commit d329541's
 * statements: unprepared, FOR UPDATE + ON CONFLICT move, unique outbox.event_id),
 * `prepared` (the same statements, prepared), `after` (this build's), `direct` (no outbox: the event
 * straight into `events` with an xid8 column and its reader indexes; measured and not adopted).
 * Figures go to docs/performance.md ("W3", "Where issue 9 ends").
 *
 *   node dist/bench/hot-path/wal-per-create.js            # every variant, twice, alternating
 *   BENCH_CREATES=6000 BENCH_VARIANTS=before,after BENCH_BY_RECORD=1 node dist/bench/hot-path/wal-per-create.js
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { migratePlatform, PgClient } from '../../storage/index.js';
import { createScratchDatabase } from '../db.js';
import { cpuMs, walByRelation } from './db-cost.js';

type Variant = 'bare' | 'before' | 'prepared' | 'after' | 'direct';
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CREATES = Number(process.env.BENCH_CREATES ?? 6000);
const CONNECTIONS = 10;
const VARIANTS = (process.env.BENCH_VARIANTS ?? 'bare,before,prepared,after').split(',') as Variant[];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const BY_RECORD = process.env.BENCH_BY_RECORD === '1';

const TENANT = randomUUID();
const PROJECT = randomUUID();
const BARE = `INSERT INTO app."Order" ("customerName", status, total, qty) VALUES ($1, $2, $3, $4) RETURNING *`;
const CREATE = `WITH w AS (INSERT INTO app."Order" ("customerName", status, total, qty) VALUES ($1, $2, $3, $4) RETURNING *),
  ob AS (INSERT INTO plinth.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
  SELECT gen_random_uuid(), $5, $6::uuid, $7::uuid, $8, $9, w.id::text, $10::jsonb, $11, $12::bigint FROM w) SELECT * FROM w`;
/** Outbox-free: the event goes straight into the log, stamped with its transaction id for readers' commit-safe horizon. */
const CREATE_DIRECT = `WITH w AS (INSERT INTO app."Order" ("customerName", status, total, qty) VALUES ($1, $2, $3, $4) RETURNING *),
  ev AS (INSERT INTO plinth.events (id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
  SELECT gen_random_uuid(), $5, $6::uuid, $7::uuid, $9, $11, $12::bigint, now(), jsonb_build_object('entity', $9::text, 'entityId', w.id::text, 'changedFields', $10::jsonb, 'branch', $8::text) FROM w) SELECT * FROM w`;
const MOVED = 'seq, event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version, occurred_at';
const PROJECT_MOVED = `INSERT INTO plinth.events (id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
  SELECT event_id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at,
  jsonb_build_object('entity', entity, 'entityId', entity_id, 'changedFields', changed_fields, 'branch', branch) FROM moved ORDER BY seq`;
const MOVE_BEFORE = `WITH picked AS (SELECT seq FROM plinth.outbox ORDER BY seq LIMIT 500 FOR UPDATE SKIP LOCKED),
  moved AS (DELETE FROM plinth.outbox WHERE seq IN (SELECT seq FROM picked) RETURNING ${MOVED}),
  projected AS (${PROJECT_MOVED} ON CONFLICT (id) DO NOTHING RETURNING 1) SELECT (SELECT count(*) FROM moved)::int AS n`;
const MOVE_AFTER = `WITH moved AS (DELETE FROM plinth.outbox WHERE seq IN (SELECT seq FROM plinth.outbox ORDER BY seq LIMIT 500) RETURNING ${MOVED}),
  projected AS (${PROJECT_MOVED} RETURNING 1) SELECT (SELECT count(*) FROM moved)::int AS n`;
const AUDIT = `INSERT INTO plinth.audit (correlation_id, tenant_id, project_id, actor, operation_id, decision, reason_code, status)
  SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[])`;

async function setUp(url: string, variant: Variant): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('DROP SCHEMA IF EXISTS plinth CASCADE; DROP SCHEMA IF EXISTS app CASCADE; CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  await c.end();
  const db = new PgClient({ connectionString: url, max: 1 });
  await migratePlatform(db);
  await db.exec(`CREATE SCHEMA app; CREATE TABLE app."Order" (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), "customerName" text NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'paid', 'shipped', 'cancelled')), total numeric NOT NULL, qty int NOT NULL,
    "createdAt" timestamptz NOT NULL DEFAULT now(), "updatedAt" timestamptz NOT NULL DEFAULT now(), "concurrencyToken" uuid NOT NULL DEFAULT gen_random_uuid());
    CREATE INDEX ON app."Order" ("createdAt", id)`);
  if (variant === 'direct') {
    await db.exec('ALTER TABLE plinth.events ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id()');
    await db.exec('DROP INDEX plinth.events_project_idx');
    await db.exec('CREATE INDEX events_project_idx ON plinth.events (project_id, xid, seq)');
    await db.exec('CREATE INDEX events_xid_idx ON plinth.events (xid, seq)');
  }
  if (variant === 'before' || variant === 'prepared') await db.exec('ALTER TABLE plinth.outbox ADD CONSTRAINT outbox_event_id_key UNIQUE (event_id)');
  await db.close();
}

async function run(url: string, dbName: string, variant: Variant): Promise<void> {
  await setUp(url, variant);
  const prepared = variant !== 'before';
  const named = (name: string, text: string, values: unknown[]): pg.QueryConfig => (prepared ? { name, text, values } : { text, values });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const relaxed = new pg.Client({ connectionString: url, options: '-c synchronous_commit=off' });
  await relaxed.connect();
  const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS });
  pool.on('error', () => {}); // the final DROP DATABASE … WITH (FORCE) ends idle connections
  await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.query('SELECT 1')));
  const self = Number((await admin.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p);
  const pids = (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> $2', [dbName, self])).rows.map((r) => Number(r.pid));
  const lsn0 = (await admin.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0]!.l;
  const cpu0 = cpuMs(pids);
  let started = 0;
  let writing = true;
  let audit: string[] = [];
  const mover = (async () => {
    for (;;) {
      const n = variant === 'bare' || variant === 'direct' ? 0 : (await relaxed.query<{ n: number }>(named('w3_move', variant === 'after' ? MOVE_AFTER : MOVE_BEFORE, []))).rows[0]!.n;
      if (!writing && n === 0) return;
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const flushAudit = async (): Promise<void> => {
    const b = audit;
    audit = [];
    if (b.length === 0) return;
    const all = <T>(v: T): T[] => b.map(() => v);
    await relaxed.query(named('w3_audit', AUDIT, [b, all(TENANT), all(PROJECT), all('user:bench'), all('Entity.Order.Create'), all('Allow'), all('Ok'), all(201)]));
  };
  let flushing = Promise.resolve();
  const flusher = setInterval(() => { flushing = flushing.then(flushAudit); }, 50);
  const t0 = Date.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (started++ < CREATES) {
      const row = ['bench', 'open', '12.50', 3];
      if (variant === 'bare') {
        await pool.query(BARE, row);
        continue;
      }
      const correlation = randomBytes(16).toString('hex');
      await pool.query(named('w3_create', variant === 'direct' ? CREATE_DIRECT : CREATE, [...row, 'entity.Order.created', TENANT, PROJECT, 'main', 'Order', JSON.stringify(['customerName', 'status', 'total', 'qty']), correlation, 1]));
      audit.push(correlation);
    }
  }));
  const ms = Date.now() - t0;
  writing = false;
  await mover;
  clearInterval(flusher);
  await (flushing = flushing.then(flushAudit));
  const cpu1 = cpuMs(pids);
  const lsn1 = (await admin.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0]!.l;
  const { by, total } = await walByRelation(admin, dbName, lsn0, lsn1, BY_RECORD, ['plinth', 'app']);
  console.log(`${variant.padEnd(8)}: WAL ${Math.round(total / CREATES)} B/create (relation records; commit records excluded), backend CPU ${Math.round((cpu1 - cpu0) * 1000 / CREATES)} µs/create; ${CREATES} creates in ${ms} ms`);
  for (const [k, e] of [...by].sort((a, b) => b[1].bytes - a[1].bytes)) {
    console.log(`    ${k.padEnd(56)} ${(e.n / CREATES).toFixed(2)} records, ${Math.round(e.bytes / CREATES)} B`);
  }
  await pool.end();
  await relaxed.end();
  await admin.end();
}

async function main(): Promise<void> {
  const db = await createScratchDatabase(ADMIN_URL);
  try {
    for (let i = 0; i < REPEAT; i++) for (const v of VARIANTS) await run(db.url, db.name, v);
  } catch (err) {
    console.error('wal-per-create failed:', err);
    process.exitCode = 1;
  } finally {
    await db.drop();
  }
}

await main();
