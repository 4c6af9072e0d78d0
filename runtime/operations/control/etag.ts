import { sha256Hex } from '../../publication/hash.js';
import type { OperationContext, Result } from '../types.js';

/** A document with its strong validator: the sha256 of the exact JSON bytes sent. */
export interface Tagged {
  body: unknown;
  etag: string;
}

export const tagged = (body: unknown): Tagged => ({ body, etag: `"${sha256Hex(JSON.stringify(body))}"` });

/** RFC 9110 If-None-Match: `*` or any listed tag (weak comparison, so `W/"x"` matches `"x"`). */
function matches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** 200 with the document (and `headers`, e.g. its Content-Type) and its ETag, or 304 with no body when the client already holds it. */
export function conditional(ctx: OperationContext, doc: Tagged, headers?: Record<string, string>): Result {
  const inm = ctx.inv.headers?.['if-none-match'] ?? '';
  if (inm !== '' && matches(inm, doc.etag)) return { status: 304, body: undefined, headers: { ETag: doc.etag } };
  return { status: 200, body: doc.body, headers: { ETag: doc.etag, ...headers } };
}
