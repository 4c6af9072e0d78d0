import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import type { RetentionRule } from './rules.js';

const S = PLATFORM_SCHEMA;

export interface SweepLimits {
  /** Rows per DELETE statement. */
  batchRows: number;
  /** Pause between two full batches, so request queries get the pool (PGlite: the one connection). */
  pauseMs: number;
  /** Stop starting batches after this long; the caller continues later. */
  budgetMs: number;
  /** Checked between batches (shutdown). */
  stopped?: () => boolean;
}

export interface RuleSweep {
  rule: string;
  deleted: number;
  batches: number;
  /** True when the budget ran out with a full last batch: more rows are due. */
  more: boolean;
}

/**
 * One bounded DELETE. PostgreSQL has no `DELETE … LIMIT` and CockroachDB has
 * no ctid, so the batch is chosen by key in a subquery that walks the
 * timestamp index oldest-first. The outer WHERE repeats the conditions: a row
 * changed by a concurrent transaction (an idempotency key re-claimed, a
 * delivery retried) is rechecked on its new version and kept.
 */
export function batchDeleteSql(rule: RetentionRule, batchRows: number): string {
  const t = `${S}.${rule.table}`;
  const key = rule.key.length === 1 ? rule.key[0]! : `(${rule.key.join(', ')})`;
  const cond = [`${rule.tsColumn} < now() - ($1::bigint * interval '1 millisecond')`];
  if (rule.onlyWhere !== undefined) cond.push(`(${rule.onlyWhere})`);
  const where = cond.join(' AND ');
  return `DELETE FROM ${t} WHERE ${key} IN (SELECT ${rule.key.join(', ')} FROM ${t} WHERE ${where} ORDER BY ${rule.tsColumn} LIMIT ${batchRows}) AND ${where}`;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Deletes a rule's expired rows in batches until none are left or the budget is spent. */
export async function sweepRule(db: SqlExecutor, rule: RetentionRule, limits: SweepLimits, startedAt = Date.now()): Promise<RuleSweep> {
  const out: RuleSweep = { rule: rule.name, deleted: 0, batches: 0, more: false };
  if (rule.retentionMs <= 0) return out; // 0 = keep forever
  const sql = batchDeleteSql(rule, limits.batchRows);
  for (;;) {
    const n = (await db.query(sql, [rule.retentionMs])).rowCount;
    out.deleted += n;
    out.batches++;
    if (n < limits.batchRows) return out;
    if (limits.stopped?.() === true || Date.now() - startedAt >= limits.budgetMs) {
      out.more = true;
      return out;
    }
    // Even a 0 ms pause is a timer turn: on PGlite the DELETE ran in this thread and requests wait on it.
    await sleep(limits.pauseMs);
  }
}

/** Sweeps rules one after another within one shared budget. */
export async function sweepRules(db: SqlExecutor, rules: RetentionRule[], limits: SweepLimits): Promise<RuleSweep[]> {
  const startedAt = Date.now();
  const out: RuleSweep[] = [];
  for (const rule of rules) {
    if (limits.stopped?.() === true) break;
    // A rule the budget did not reach counts as `more`, so the caller comes back for it.
    if (out.some((r) => r.more)) out.push({ rule: rule.name, deleted: 0, batches: 0, more: rule.retentionMs > 0 });
    else out.push(await sweepRule(db, rule, limits, startedAt));
  }
  return out;
}
