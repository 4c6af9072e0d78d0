import { invalidParams } from './jsonrpc.js';

/** Items per page of `tools/list` and `resources/list`. */
export const LIST_PAGE_SIZE = 25;

const PREFIX = 'after:';

/**
 * Stable cursors (spec: `tools/list` "stable cursors"): a cursor names the
 * last item of the page it ends, and the next page starts after that name
 * in the list's sorted order. A publication that adds or drops an item
 * between two pages neither repeats nor skips the others.
 */
export function pageOf<T>(items: readonly T[], nameOf: (item: T) => string, cursor: unknown, size = LIST_PAGE_SIZE): { items: T[]; nextCursor?: string } {
  let after: string | null = null;
  if (cursor !== undefined && cursor !== null) {
    if (typeof cursor !== 'string' || cursor.length > 1024) throw invalidParams('cursor must be a string from a previous page');
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    if (!text.startsWith(PREFIX)) throw invalidParams('invalid cursor');
    after = text.slice(PREFIX.length);
  }
  const start = after === null ? 0 : items.findIndex((i) => nameOf(i) > after!);
  const rest = start === -1 ? [] : items.slice(start);
  const page = rest.slice(0, size);
  if (rest.length <= size) return { items: page };
  return { items: page, nextCursor: Buffer.from(PREFIX + nameOf(page[page.length - 1]!)).toString('base64url') };
}
