import { createHash } from 'node:crypto';
import { validationFailed } from '../errors/service-error.js';

/**
 * Keyset cursor: the sort-key values of the last row of a page, the page
 * number it leads to, and a short hash of the filter+sort it was made for.
 * Opaque to clients (base64url JSON); a cursor from another filter or sort
 * is rejected with 422.
 */
export interface CursorState {
  values: unknown[];
  page: number;
}

const MAX_CURSOR_TEXT = 8 * 1024;

const shapeHash = (shapeKey: string): string => createHash('sha256').update(shapeKey).digest('base64url').slice(0, 16);

export function encodeCursor(shapeKey: string, values: unknown[], page: number): string {
  return Buffer.from(JSON.stringify({ h: shapeHash(shapeKey), v: values, p: page })).toString('base64url');
}

export function decodeCursor(text: string, shapeKey: string, keyCount: number): CursorState {
  const bad = (reason: string, message: string) => validationFailed(`Query.${reason}`, message, 'cursor');
  if (text.length > MAX_CURSOR_TEXT || !/^[A-Za-z0-9_-]+$/.test(text)) throw bad('InvalidCursor', 'cursor is malformed');
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad('InvalidCursor', 'cursor is malformed');
  }
  if (typeof raw !== 'object' || raw === null) throw bad('InvalidCursor', 'cursor is malformed');
  const { h, v, p } = raw as { h?: unknown; v?: unknown; p?: unknown };
  if (typeof h !== 'string' || !Array.isArray(v) || v.length !== keyCount || typeof p !== 'number' || !Number.isInteger(p) || p < 1) {
    throw bad('InvalidCursor', 'cursor is malformed');
  }
  if (h !== shapeHash(shapeKey)) throw bad('CursorMismatch', 'cursor was issued for another filter or sort');
  for (const x of v) if (x !== null && typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') throw bad('InvalidCursor', 'cursor is malformed');
  return { values: v, page: p };
}
