import { validationFailed } from '../../errors/service-error.js';
import { control, type Page } from '../envelopes.js';
import { logPageSize } from '../log-paging.js';
import type { OperationContext, Result } from '../types.js';

/**
 * Keyset paging over a table's `seq` for the scheduling lists, as entity lists
 * page: `pageSize` (1..maxPageSize, default 50), `cursor` = the `page.next` of
 * the page before. The cursor is the base64url of `[seq, filterKey]`: a cursor
 * of one filter is refused on another (422 Query.InvalidCursor).
 */
export interface SeqPaging {
  size: number;
  /** The last seq of the page before, or null on the first page. */
  after: string | null;
}

export function seqPaging(ctx: OperationContext, filterKey: string): SeqPaging {
  const size = logPageSize(ctx);
  const text = ctx.inv.query.get('cursor');
  if (text === undefined || text === '') return { size, after: null };
  const bad = () => validationFailed('Query.InvalidCursor', 'cursor is malformed or belongs to another filter', 'cursor');
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'string' || !/^\d{1,18}$/.test(v[0]) || v[1] !== filterKey) throw bad();
  return { size, after: v[0] };
}

/** The control-plane list answer `{ surface, state: 'listed', correlationId, data, page }` of rows fetched with LIMIT size + 1. */
export function seqPage<R extends { seq: string }>(ctx: OperationContext, surface: string, rows: R[], p: SeqPaging, filterKey: string, record: (r: R) => unknown): Result {
  const more = rows.length > p.size;
  const kept = more ? rows.slice(0, p.size) : rows;
  const page: Page = { number: 1, size: p.size };
  if (more) page.next = Buffer.from(JSON.stringify([String(kept[kept.length - 1]!.seq), filterKey])).toString('base64url');
  const answer = control(ctx, surface, 'listed', kept.map(record));
  return { ...answer, body: { ...(answer.body as Record<string, unknown>), page } };
}
