import { PLATFORM_SCHEMA as S, type SqlExecutor } from '../../storage/index.js';
import { usageKindOf } from './catalog.js';

/** One bucket of one quota's counter, as persisted in `quota_usage`. */
export interface BucketUsage {
  quotaId: string;
  windowStart: number;
  used: number;
}

/** Whether the usage ledger exists (platform migration 18; absent on a node without usage metering). */
export async function hasUsageEvents(db: SqlExecutor): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>(`SELECT to_regclass('${S}.usage_ledger') IS NOT NULL AS ok`);
  return r.rows[0]?.ok === true;
}

/**
 * A counter's starting point: per bucket from `from` on, the larger of what
 * the owner persisted (`quota_usage`) and what the durable usage events sum
 * to. Both lag the live count (each is written in batches), so the larger
 * one is the closer; usage events are the ones that survive a crash of the
 * owner between two counter flushes.
 */
export async function loadBuckets(
  db: SqlExecutor, q: { id: string; projectId: string; kind: string; dimensions: Record<string, string> },
  from: number, bucketOf: (t: number) => number, withEvents: boolean,
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const persisted = await db.query<{ window_start: Date | string; used: string | number }>(
    `SELECT window_start, used FROM ${S}.quota_usage WHERE quota_id = $1 AND window_start >= $2`, [q.id, new Date(from)],
  );
  for (const r of persisted.rows) out.set(new Date(r.window_start).getTime(), Number(r.used));
  if (!withEvents) return out;
  const dims = Object.keys(q.dimensions).length === 0 ? null : JSON.stringify(q.dimensions);
  // Minute granularity is enough to place an event in its bucket (buckets are minutes or longer).
  const events = await db.query<{ minute: string | number; quantity: string | number }>(
    `SELECT floor(extract(epoch FROM at) / 60)::bigint AS minute, sum(quantity)::bigint AS quantity FROM ${S}.usage_ledger
      WHERE project_id = $1 AND kind = $2 AND at >= $3 AND ($4::jsonb IS NULL OR dimensions @> $4::jsonb) GROUP BY 1`,
    [q.projectId, usageKindOf(q.kind), new Date(from), dims],
  );
  const fromEvents = new Map<number, number>();
  for (const r of events.rows) {
    const b = bucketOf(Number(r.minute) * 60_000);
    fromEvents.set(b, (fromEvents.get(b) ?? 0) + Number(r.quantity));
  }
  for (const [b, n] of fromEvents) out.set(b, Math.max(out.get(b) ?? 0, n));
  return out;
}

/** Writes counter buckets in one statement; a bucket only grows (GREATEST), a deleted quota's rows are skipped. */
export async function persistBuckets(db: SqlExecutor, rows: readonly BucketUsage[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO ${S}.quota_usage (quota_id, window_start, used)
     SELECT u.q, u.w, u.n FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS u(q, w, n)
      WHERE EXISTS (SELECT 1 FROM ${S}.quotas WHERE id = u.q)
     ON CONFLICT (quota_id, window_start) DO UPDATE SET used = GREATEST(${S}.quota_usage.used, excluded.used), updated_at = now()`,
    [rows.map((r) => r.quotaId), rows.map((r) => new Date(r.windowStart)), rows.map((r) => r.used)],
  );
}
