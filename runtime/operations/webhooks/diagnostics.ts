import { PLATFORM_SCHEMA, quoteIdent, type SqlExecutor } from '../../../storage/index.js';
import { single } from '../envelopes.js';
import { INBOUND_SCHEMAS } from './inbound-schemas.js';
import { webhookOp } from './webhook-op.js';

const S = PLATFORM_SCHEMA;

interface TableInfo {
  table: string;
  columns: Set<string>;
}

/** The platform's webhook tables and their columns, read from the catalog: outbound tables may not exist on this build. */
async function webhookTables(db: SqlExecutor): Promise<Map<string, TableInfo>> {
  const res = await db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND left(table_name, 8) = 'webhook_'`, [S],
  );
  const out = new Map<string, TableInfo>();
  for (const r of res.rows) {
    const t = out.get(r.table_name) ?? { table: r.table_name, columns: new Set<string>() };
    t.columns.add(r.column_name);
    out.set(r.table_name, t);
  }
  return out;
}

async function countByState(db: SqlExecutor, t: TableInfo, projectId: string): Promise<Record<string, number> | null> {
  if (!t.columns.has('project_id')) return null;
  const table = `${S}.${quoteIdent(t.table)}`;
  if (!t.columns.has('state')) {
    const r = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE project_id = $1`, [projectId]);
    return { total: Number(r.rows[0]?.n ?? 0) };
  }
  const r = await db.query<{ state: string; n: string }>(`SELECT state, count(*) AS n FROM ${table} WHERE project_id = $1 GROUP BY state`, [projectId]);
  const out: Record<string, number> = { total: 0 };
  for (const row of r.rows) {
    out[row.state] = Number(row.n);
    out.total! += Number(row.n);
  }
  return out;
}

export const WEBHOOK_DIAGNOSTICS_SPECS = {
  /**
   * `GET /api/webhooks/diagnostics`: per-table counts for the project's webhook
   * tables (receivers, receipts; endpoints and deliveries by state when the
   * outbound tables exist) and the last failed webhook calls from audit.
   */
  diagnostics: webhookOp('Webhooks.Diagnostics', {
    summary: 'Counts per webhook table and state, and the last failed webhook calls',
    routes: [{ method: 'GET', path: 'webhooks/diagnostics' }],
    output: { status: 200, body: INBOUND_SCHEMAS.WebhookDiagnostics },
  }, async (ctx) => {
    const db = ctx.services.db;
    const projectId = ctx.scope!.project.id;
    const tables = await webhookTables(db);
    const counts: Record<string, Record<string, number>> = {};
    for (const t of [...tables.values()].sort((a, b) => a.table.localeCompare(b.table))) {
      const c = await countByState(db, t, projectId);
      if (c !== null) counts[t.table.slice('webhook_'.length)] = c;
    }
    const errors = await db.query<{ at: string; correlationId: string; operationId: string; reasonCode: string; status: number }>(
      `SELECT at, correlation_id AS "correlationId", operation_id AS "operationId", reason_code AS "reasonCode", status
       FROM ${S}.audit WHERE project_id = $1 AND left(operation_id, 9) = 'Webhooks.' AND status >= 400 ORDER BY seq DESC LIMIT 20`,
      [projectId],
    );
    // `at` as the JSON answer carries it (the driver may hand a Date).
    return single(ctx, { counts, lastErrors: errors.rows.map((e) => ({ ...e, at: new Date(e.at).toISOString(), status: Number(e.status) })) });
  }),
};
