/**
 * The audit write path (ADR 0003, docs/performance.md): BufferedAuditWriter
 * writes a flush as unnest() INSERTs of sixteen array parameters, in
 * statements of at most 100 rows on PGlite (one connection in the Node
 * thread: the event loop turns between two of them, so a request waits
 * behind at most one) and 500 on PostgreSQL, and
 * values of any shape (quotes, braces, backslashes, NULL ids) survive the
 * array encoding on both backends, as do the request's time and the usage
 * the row carries.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BufferedAuditWriter } from '../../runtime/pipeline/audit-writer.js';
import type { AuditRow } from '../../runtime/pipeline/evidence.js';
import type { Logger } from '../../runtime/log.js';
import { migratePlatform, PgClient, PgliteClient, type SqlClient } from '../../storage/index.js';
import { createTestDatabase, forEachBackend, type Backend } from '../support/server.js';

const silent: Logger = { info: () => {}, warn: () => {}, error: () => {}, child: () => silent };
/** The decision-record part of a row that carries none. */
const AT = Date.parse('2026-11-26T10:11:12.345Z');
const PLAIN = { at: AT, stage: 6, evaluatedFilter: null, fieldMasks: [], details: null, usage: null } as const;

/**
 * The client, with a record of each audit INSERT's parameter count and rows,
 * and of the event-loop turns (setImmediate) seen before it started.
 */
function recording(db: SqlClient): { db: SqlClient; inserts: Array<{ params: number; rows: number }>; turnsAtInsert: number[]; stop(): void } {
  const inserts: Array<{ params: number; rows: number }> = [];
  const turnsAtInsert: number[] = [];
  let turns = 0;
  let stopped = false;
  const tick = (): void => {
    turns++;
    if (!stopped) setImmediate(tick);
  };
  setImmediate(tick);
  const wrapped: SqlClient = Object.create(db);
  wrapped.query = async (sql, params) => {
    const audit = /INSERT INTO plinth\.audit/.test(sql);
    if (audit) turnsAtInsert.push(turns);
    const res = await db.query(sql, params);
    if (audit) inserts.push({ params: params?.length ?? 0, rows: res.rowCount });
    return res as never;
  };
  return { db: wrapped, inserts, turnsAtInsert, stop: () => (stopped = true) };
}

forEachBackend('audit writer', (backend: Backend) => {
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

  it('writes a 500-row flush in bounded statements of sixteen array parameters', async () => {
    const r = recording(db);
    const w = new BufferedAuditWriter(r.db, silent);
    const tag = randomUUID();
    for (let i = 0; i < 500; i++) {
      w.record({ correlationId: `${tag}-${i}`, tenantId: null, projectId: null, actor: 'admin', operationId: 'Test.Op', decision: 'Allow', reasonCode: 'Ok', status: 200, ...PLAIN });
    }
    await w.flush();
    r.stop();
    const perStatement = backend === 'pglite' ? 100 : 500;
    assert.deepEqual(r.inserts, Array.from({ length: 500 / perStatement }, () => ({ params: 16, rows: perStatement })));
    for (let i = 1; i < r.turnsAtInsert.length; i++) {
      assert.ok(r.turnsAtInsert[i]! > r.turnsAtInsert[i - 1]!, `the event loop turns between statements ${i - 1} and ${i}`);
    }
    const n = await db.query<{ n: string }>(`SELECT count(*) AS n FROM plinth.audit WHERE correlation_id LIKE $1`, [`${tag}-%`]);
    assert.equal(Number(n.rows[0]!.n), 500);
  });

  it('keeps awkward text and NULL ids intact through the array encoding', async () => {
    const w = new BufferedAuditWriter(db, silent);
    const tenant = randomUUID();
    const rows: AuditRow[] = [
      { correlationId: `q-${tenant}`, tenantId: tenant, projectId: null, actor: `user:"quoted", {braced}`, operationId: 'Entity.A\\B.Get', decision: 'Deny', reasonCode: 'NULL', status: 403, ...PLAIN, stage: 4, details: { missingGrants: ['entity:A:read'], bindingId: 'rest:Entity.A.Read' } },
      { correlationId: `u-${tenant}`, tenantId: null, projectId: tenant, actor: "it's ünïcødé 🙂", operationId: '', decision: 'Error', reasonCode: 'a,b', status: 500, ...PLAIN },
      { correlationId: `m-${tenant}`, tenantId: null, projectId: tenant, actor: 'user:x', operationId: 'Entity.A.List', decision: 'Mask', reasonCode: 'Access.Allowed', status: 200, ...PLAIN, evaluatedFilter: { and: [{ owner: { eq: "o'\\\"{x}" } }, { n: { in: [1, null] } }] }, fieldMasks: ['secret', 'a,b'] },
    ];
    for (const row of rows) w.record(row);
    await w.flush();
    const got = await db.query<Record<string, unknown>>(
      `SELECT correlation_id AS "correlationId", tenant_id AS "tenantId", project_id AS "projectId", actor, operation_id AS "operationId", decision, reason_code AS "reasonCode", status,
         stage, evaluated_filter AS "evaluatedFilter", field_masks AS "fieldMasks", details
       FROM plinth.audit WHERE correlation_id = ANY($1::text[]) ORDER BY seq`, [rows.map((x) => x.correlationId)],
    );
    const expected = rows.map(({ at: _at, usage: _usage, ...x }) => ({ ...x, details: x.details ?? {} }));
    assert.deepEqual(got.rows.map((x) => ({ ...x, status: Number(x.status), stage: Number(x.stage) })), expected);
  });

  it('records a filter JSON cannot hold as none, without losing the rest of the batch', async () => {
    const w = new BufferedAuditWriter(db, silent);
    const tag = randomUUID();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    w.record({ correlationId: `bad-${tag}`, tenantId: null, projectId: null, actor: 'a', operationId: 'Op', decision: 'Allow', reasonCode: 'Ok', status: 200, ...PLAIN, evaluatedFilter: { n: 1n } });
    w.record({ correlationId: `cyc-${tag}`, tenantId: null, projectId: null, actor: 'a', operationId: 'Op', decision: 'Allow', reasonCode: 'Ok', status: 200, ...PLAIN, evaluatedFilter: cyclic });
    w.record({ correlationId: `ok-${tag}`, tenantId: null, projectId: null, actor: 'a', operationId: 'Op', decision: 'Allow', reasonCode: 'Ok', status: 200, ...PLAIN, evaluatedFilter: { n: 1 } });
    await w.flush();
    const got = await db.query<{ c: string; f: unknown }>(`SELECT correlation_id AS c, evaluated_filter AS f FROM plinth.audit WHERE correlation_id LIKE $1 ORDER BY seq`, [`%-${tag}`]);
    assert.deepEqual(got.rows, [{ c: `bad-${tag}`, f: null }, { c: `cyc-${tag}`, f: null }, { c: `ok-${tag}`, f: { n: 1 } }]);
  });

  it("keeps the request's time and the usage the row carries", async () => {
    const w = new BufferedAuditWriter(db, silent);
    const tag = randomUUID();
    const base = { tenantId: null, projectId: null, actor: 'a', operationId: 'Entity.Order.List', decision: 'Allow', reasonCode: 'Access.Allowed', status: 200 } as const;
    w.record({ ...base, ...PLAIN, correlationId: `r-${tag}`, usage: { kind: 'read.monthly', quantity: 1, dimensions: { entity: 'Order', protocol: 'grpc' } } });
    w.record({ ...base, ...PLAIN, correlationId: `w-${tag}`, at: AT + 7, usage: { kind: 'write.monthly', quantity: 1000 } });
    w.record({ ...base, ...PLAIN, correlationId: `n-${tag}` });
    await w.flush();
    const got = await db.query<{ c: string; at: Date; k: string | null; q: string | null; d: unknown }>(
      `SELECT correlation_id AS c, at, usage_kind AS k, usage_quantity::text AS q, usage_dimensions AS d FROM plinth.audit WHERE correlation_id LIKE $1 ORDER BY seq`, [`%-${tag}`],
    );
    assert.deepEqual(got.rows.map((r) => ({ ...r, at: new Date(r.at).getTime() })), [
      { c: `r-${tag}`, at: AT, k: 'read.monthly', q: '1', d: { entity: 'Order', protocol: 'grpc' } },
      { c: `w-${tag}`, at: AT + 7, k: 'write.monthly', q: '1000', d: null },
      { c: `n-${tag}`, at: AT, k: null, q: null, d: null },
    ]);
  });
});
