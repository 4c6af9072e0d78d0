/**
 * What a metered request's evidence costs the database, independent of the
 * machine's load: the node's own writers (BufferedAuditWriter,
 * BufferedUsageWriter) write the evidence of BENCH_REQUESTS read requests in
 * 500-row flushes, as under load, into a scratch database with the platform
 * schema, one connection each. Variants:
 * - `two-rows`: the audit row, and the usage event in usage_events (before
 *   platform migration 18);
 * - `one-row`: the audit row carrying the usage (this build).
 * Figures: WAL per request (pg_walinspect, this database's relations only),
 * backend CPU per request (/proc of the database's backends) and the Node
 * process's CPU per request (building the batches). docs/performance.md.
 *
 *   node dist/bench/hot-path/evidence-per-request.js
 *   BENCH_REQUESTS=50000 BENCH_REPEAT=3 node dist/bench/hot-path/evidence-per-request.js
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../../runtime/log.js';
import { BufferedAuditWriter } from '../../runtime/pipeline/audit-writer.js';
import type { AuditRow } from '../../runtime/pipeline/audit-row.js';
import { BufferedUsageWriter } from '../../runtime/usage/usage-writer.js';
import { migratePlatform, PgClient } from '../../storage/index.js';
import { createScratchDatabase } from '../db.js';
import { cpuMs, walByRelation } from './db-cost.js';

type Variant = 'two-rows' | 'one-row';
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const FLUSH_ROWS = 500;
const silent: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => silent };

const TENANT = randomUUID();
const PROJECT = randomUUID();
const USAGE = { kind: 'read.monthly', quantity: 1, dimensions: { entity: 'Order' } } as const;

function auditRow(withUsage: boolean): AuditRow {
  return {
    at: Date.now(), correlationId: randomBytes(13).toString('hex'), tenantId: TENANT, projectId: PROJECT, actor: `user:${PROJECT}`,
    operationId: 'Entity.Order.Read', decision: 'Allow', reasonCode: 'Access.Allowed', status: 200, stage: 6, evaluatedFilter: null,
    fieldMasks: [], details: null, usage: withUsage ? USAGE : null,
  };
}

async function run(url: string, dbName: string, variant: Variant): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('DROP SCHEMA IF EXISTS plinth CASCADE; CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  const auditDb = new PgClient({ connectionString: url, max: 1 });
  const usageDb = new PgClient({ connectionString: url, max: 1 });
  await migratePlatform(auditDb);
  await Promise.all([auditDb.query('SELECT 1'), usageDb.query('SELECT 1')]);
  const audit = new BufferedAuditWriter(auditDb, silent);
  const usage = new BufferedUsageWriter(usageDb, silent);
  const self = Number((await admin.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p);
  const pids = (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> $2', [dbName, self])).rows.map((r) => Number(r.pid));
  const lsn0 = (await admin.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0]!.l;
  const cpu0 = cpuMs(pids);
  const node0 = process.cpuUsage();
  const t0 = Date.now();
  for (let done = 0; done < REQUESTS; done += FLUSH_ROWS) {
    for (let i = 0; i < FLUSH_ROWS; i++) {
      const row = auditRow(variant === 'one-row');
      audit.record(row);
      if (variant === 'two-rows') {
        usage.record({ tenantId: TENANT, projectId: PROJECT, kind: USAGE.kind, quantity: 1, at: new Date(row.at).toISOString(), operationId: row.operationId, correlationId: row.correlationId, dimensions: USAGE.dimensions });
      }
    }
    await Promise.all([audit.flush(), usage.flush()]);
  }
  const ms = Date.now() - t0;
  const node = process.cpuUsage(node0);
  const cpu1 = cpuMs(pids);
  const lsn1 = (await admin.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0]!.l;
  const { by, total } = await walByRelation(admin, dbName, lsn0, lsn1, false, ['plinth']);
  const perRequest = (n: number): number => Math.round((n * 1000) / REQUESTS);
  console.log(`${variant.padEnd(8)}: WAL ${Math.round(total / REQUESTS)} B/request, backend CPU ${perRequest(cpu1 - cpu0)} µs/request, `
    + `Node CPU ${perRequest((node.user + node.system) / 1000)} µs/request; ${REQUESTS} requests' evidence in ${ms} ms`);
  for (const [k, e] of [...by].sort((a, b) => b[1].bytes - a[1].bytes)) {
    console.log(`    ${k.padEnd(48)} ${(e.n / REQUESTS).toFixed(2)} records, ${Math.round(e.bytes / REQUESTS)} B`);
  }
  await auditDb.close();
  await usageDb.close();
  await admin.end();
}

async function main(): Promise<void> {
  const db = await createScratchDatabase(ADMIN_URL);
  try {
    for (let i = 0; i < REPEAT; i++) for (const v of ['two-rows', 'one-row'] as const) await run(db.url, db.name, v);
  } catch (err) {
    console.error('evidence-per-request failed:', err);
    process.exitCode = 1;
  } finally {
    await db.drop();
  }
}

await main();
