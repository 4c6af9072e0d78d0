import { SqlParams } from '../filter/to-sql.js';

/**
 * A subscription filter compiled against its entity's table. The hub never
 * runs one filter on its own: it evaluates every distinct filter of an
 * entity over a batch of changed rows in one SELECT (`batchQuery`).
 */
export interface RowCheck {
  /** Same table, predicate and values ⇒ same key: subscribers sharing a filter share one column. */
  key: string;
  /** Qualified table the predicate is over (alias `t`). */
  table: string;
  /** The table's live-row condition (` AND t."deletedAt" IS NULL`, or ''): hidden rows never match. */
  live: string;
  /** How many parameters `predicate` adds (queries are chunked under a parameter bound). */
  paramCount: number;
  /** Appends the filter's values to `params` and returns its boolean predicate over alias `t`. */
  predicate(params: SqlParams): string;
}

/** Columns (distinct filters) per query: wide enough to batch, small enough to plan quickly. */
export const MAX_FILTERS_PER_QUERY = 100;
/** Parameters per query, far under PostgreSQL's 65,535. */
export const MAX_PARAMS_PER_QUERY = 10_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Splits the checks of one table into query-sized chunks (columns and parameters bounded). */
export function chunkChecks(checks: readonly RowCheck[], maxFilters = MAX_FILTERS_PER_QUERY, maxParams = MAX_PARAMS_PER_QUERY): RowCheck[][] {
  const chunks: RowCheck[][] = [];
  let current: RowCheck[] = [];
  let params = 1; // $1 is the id array
  for (const c of checks) {
    if (current.length > 0 && (current.length >= maxFilters || params + c.paramCount > maxParams)) {
      chunks.push(current);
      current = [];
      params = 1;
    }
    current.push(c);
    params += c.paramCount;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * One SELECT that evaluates each check as a boolean column over the changed
 * rows: `SELECT t.id, (p0) IS TRUE AS f0, … FROM <table> t WHERE t.id =
 * ANY($1) <live>`. A row that is gone (or hidden) is absent, so it matches
 * nothing; `IS TRUE` makes a NULL predicate a non-match.
 */
export function batchQuery(checks: readonly RowCheck[], ids: readonly string[]): { text: string; values: unknown[] } {
  const first = checks[0];
  if (first === undefined) throw new Error('batchQuery needs at least one check');
  const params = new SqlParams();
  params.add(ids);
  const columns = checks.map((c, i) => `(${c.predicate(params)}) IS TRUE AS f${i}`);
  return { text: `SELECT t.id::text AS id, ${columns.join(', ')} FROM ${first.table} t WHERE t.id = ANY($1::uuid[])${first.live}`, values: params.values };
}

export type RunQuery = (text: string, values: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }>;

/** Which rows (lower-case ids) each check matches, by check key. */
export type Matches = Map<string, Set<string>>;

/**
 * Evaluates checks (all over one table) against rows, one query per chunk,
 * one chunk after another: a project never holds more than one DB
 * connection for its filters. A chunk that fails (a filter no longer
 * compiles against a changed schema) is retried one check at a time, so one
 * broken filter matches nothing without failing the others.
 */
export async function evaluateChecks(run: RunQuery, checks: readonly RowCheck[], entityIds: Iterable<string>, onFailure: (err: unknown) => void): Promise<Matches> {
  const matches: Matches = new Map();
  const ids = [...new Set([...entityIds].filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  if (ids.length === 0 || checks.length === 0) return matches;
  const runChunk = async (chunk: readonly RowCheck[]): Promise<void> => {
    const q = batchQuery(chunk, ids);
    const res = await run(q.text, q.values);
    chunk.forEach((c, i) => {
      const hit = new Set<string>();
      for (const row of res.rows) if (row[`f${i}`] === true) hit.add(String(row.id).toLowerCase());
      matches.set(c.key, hit);
    });
  };
  for (const chunk of chunkChecks(checks)) {
    try {
      await runChunk(chunk);
    } catch {
      for (const c of chunk) {
        try {
          await runChunk([c]);
        } catch (err) {
          matches.set(c.key, new Set());
          onFailure(err);
        }
      }
    }
  }
  return matches;
}
