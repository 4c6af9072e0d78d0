import { createHash } from 'node:crypto';
import { validationFailed } from '../errors/service-error.js';
import { unstorableTextIn } from '../storable-text.js';
import type { FieldDef } from '../publication/model.js';
import { isStorableTimestamp } from '../filter/flat-filter.js';
import { checkFieldValue } from './field-values.js';

/**
 * Keyset cursor: the sort-key values of the last row of a page, the page
 * number it leads to, and a short hash of the filter+sort it was made for.
 * Opaque to clients (base64url JSON); a cursor from another filter or sort
 * is rejected with 422. The hash is no secret, so a client can forge any
 * values: each one is checked against its sort key's field type before it
 * becomes a SQL parameter (a boolean for a timestamptz, 1e308 for an
 * integer would otherwise fail in the database).
 */
export interface CursorState {
  values: unknown[];
  page: number;
}

const MAX_CURSOR_TEXT = 8 * 1024;

/** Hashes of recent shape keys: a list answers one cursor per page, and a client pages one filter and sort many times. */
const shapeHashes = new Map<string, string>();
const SHAPE_HASHES_MAX = 4096;

function shapeHash(shapeKey: string): string {
  let h = shapeHashes.get(shapeKey);
  if (h === undefined) {
    h = createHash('sha256').update(shapeKey).digest('base64url').slice(0, 16);
    if (shapeHashes.size >= SHAPE_HASHES_MAX) shapeHashes.clear(); // bounded: a flood of distinct filters costs a rehash, not memory
    shapeHashes.set(shapeKey, h);
  }
  return h;
}

export function encodeCursor(shapeKey: string, values: unknown[], page: number): string {
  return Buffer.from(JSON.stringify({ h: shapeHash(shapeKey), v: values, p: page })).toString('base64url');
}

/** What a cursor value is checked against: the sort key's field (the last key is `id`). */
export type CursorKey = Pick<FieldDef, 'name' | 'type' | 'values' | 'references' | 'nullable'>;

export function decodeCursor(text: string, shapeKey: string, keys: readonly CursorKey[]): CursorState {
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
  if (typeof h !== 'string' || !Array.isArray(v) || v.length !== keys.length || typeof p !== 'number' || !Number.isSafeInteger(p) || p < 1 || p >= Number.MAX_SAFE_INTEGER) {
    throw bad('InvalidCursor', 'cursor is malformed');
  }
  if (h !== shapeHash(shapeKey)) throw bad('CursorMismatch', 'cursor was issued for another filter or sort');
  // A cursor is base64 JSON the caller can forge: its values reach SQL without passing dispatch's input check.
  if (unstorableTextIn(v) !== null) throw bad('InvalidCursor', 'cursor is malformed');
  v.forEach((x, i) => {
    const key = keys[i]!;
    // A row's key is null only in a nullable column; `id` never is.
    let problem = x === null ? (key.nullable ? null : 'is null') : checkFieldValue(key, x);
    // The database refuses days that do not exist (2023-02-30); a cursor we issued never holds one.
    if (problem === null && (key.type === 'DateTime' || key.type === 'Instant') && typeof x === 'string' && !isStorableTimestamp(x)) problem = 'is not a timestamp';
    if (problem !== null) throw bad('InvalidCursor', `cursor value for '${key.name}' ${problem}`);
  });
  return { values: v, page: p };
}
