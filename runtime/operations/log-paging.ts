import { validationFailed } from '../errors/service-error.js';
import type { OperationContext } from './types.js';

const MAX_BIGINT = 9223372036854775807n;
const DEFAULT_PAGE_SIZE = 50;

/** `pageSize` of a log listing (events, audit): 1..limits.maxPageSize, default 50. */
export function logPageSize(ctx: OperationContext): number {
  const text = ctx.inv.query.get('pageSize') ?? String(DEFAULT_PAGE_SIZE);
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1) throw validationFailed('Query.InvalidPageSize', 'pageSize must be a positive integer', 'pageSize');
  const size = Number(text);
  if (size > ctx.services.limits.maxPageSize) throw validationFailed('Query.PageSizeTooLarge', `pageSize must be at most ${ctx.services.limits.maxPageSize}`, 'pageSize');
  return size;
}

/**
 * A log position `<prefix><seq>` (`e12` for events, `a12` for audit) → the seq.
 * 19 digits can still pass bigint's maximum, which SQL would refuse as a 500.
 */
export function seqOfPosition(position: string, prefix: string, field: string, reason: string): string {
  const digits = position.slice(prefix.length);
  if (!position.startsWith(prefix) || !/^\d{1,19}$/.test(digits) || BigInt(digits) > MAX_BIGINT) throw validationFailed(reason, `${field} is malformed`, field);
  return digits;
}

/** Cursors are the base64url of a position, so clients treat them as opaque. */
export const encodeSeqCursor = (prefix: string, seq: string): string => Buffer.from(`${prefix}${seq}`).toString('base64url');

export function decodeSeqCursor(text: string | undefined, prefix: string): string | null {
  if (text === undefined || text === '') return null;
  return seqOfPosition(Buffer.from(text, 'base64url').toString('utf8'), prefix, 'cursor', 'Query.InvalidCursor');
}
