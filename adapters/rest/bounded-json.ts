/**
 * JSON.stringify under a byte budget. A page of 60 rows of 10 MiB each
 * would build one 600 MB string: past V8's string limit JSON.stringify throws
 * RangeError, and below it the node still holds the whole text. Here the top
 * levels (the envelope, its arrays, the rows in them) are walked and each
 * field value is stringified on its own, so the text is counted as it grows
 * and the walk stops at the first piece that crosses the budget.
 *
 * A container whose rough size is small (most answers, most rows) is
 * stringified natively in one call; only big ones are walked.
 *
 * Output is byte-for-byte JSON.stringify's (no spacing): toJSON, undefined,
 * functions and symbols behave the same because each piece is JSON.stringify's.
 */

/** Containers at depth ≤ WALK_DEPTH are walked (envelope → data → row → field value; include → row). */
const WALK_DEPTH = 4;
/** A container below the envelope with more entries is a value (a big JSON array), stringified whole. */
const WALK_MAX_ENTRIES = 1_000;

/** A value whose rough size is under this is stringified whole, natively: most answers take this path. */
const NATIVE_BELOW = 256 * 1024;

/**
 * A cheap estimate of a value's JSON length (string lengths plus a little per
 * member; escapes can make the text up to 6× longer), stopping once past
 * `limit`. It allocates nothing, so measuring a page costs far less than
 * stringifying it piece by piece.
 */
function roughLength(v: unknown, limit: number, n = 0): number {
  if (typeof v === 'string') return n + v.length + 2;
  if (typeof v !== 'object' || v === null) return n + 8;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && n <= limit; i++) n = roughLength(v[i], limit, n + 1);
    return n;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length && n <= limit; i++) n = roughLength((v as Record<string, unknown>)[keys[i]!], limit, n + keys[i]!.length + 4);
  return n;
}

const isPlain = (v: object): boolean => {
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The JSON text of `value`, or null when it would be longer than `maxBytes` UTF-8 bytes. */
export function stringifyWithin(value: unknown, maxBytes: number): string | null {
  const parts: string[] = [];
  let bytes = 0;
  /** false once over budget. */
  const put = (s: string): boolean => {
    bytes += Buffer.byteLength(s);
    parts.push(s);
    return bytes <= maxBytes;
  };
  /** The native piece, or null over budget: V8 throws RangeError for a string past its limit. */
  const leaf = (v: unknown): string | undefined | null => {
    try {
      return JSON.stringify(v);
    } catch (err) {
      if (err instanceof RangeError && /string length/i.test(err.message)) return null;
      throw err;
    }
  };
  const walkable = (v: unknown, depth: number): v is object =>
    typeof v === 'object' && v !== null && depth <= WALK_DEPTH && (Array.isArray(v) ? depth === 0 || v.length <= WALK_MAX_ENTRIES : isPlain(v) && (depth === 0 || Object.keys(v).length <= WALK_MAX_ENTRIES))
    && roughLength(v, NATIVE_BELOW) > NATIVE_BELOW;
  /** true: written; false: over budget; undefined: nothing to write (JSON.stringify's undefined). */
  const walk = (v: unknown, depth: number): boolean | undefined => {
    if (!walkable(v, depth)) {
      const s = leaf(v);
      return s === null ? false : s === undefined ? undefined : put(s);
    }
    if (Array.isArray(v)) {
      if (!put('[')) return false;
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && !put(',')) return false;
        const ok = walk(v[i], depth + 1);
        if (ok === false || (ok === undefined && !put('null'))) return false;
      }
      return put(']');
    }
    if (!put('{')) return false;
    let first = true;
    for (const k of Object.keys(v)) {
      const item = (v as Record<string, unknown>)[k];
      const key = `${first ? '' : ','}${JSON.stringify(k)}:`;
      if (walkable(item, depth + 1)) {
        if (!put(key) || walk(item, depth + 1) === false) return false;
      } else {
        // A member whose value stringifies to undefined is left out, as JSON.stringify does.
        const s = leaf(item);
        if (s === null) return false;
        if (s === undefined) continue;
        if (!put(key + s)) return false;
      }
      first = false;
    }
    return put('}');
  };
  const ok = walk(value, 0);
  if (ok === false) return null;
  return ok === undefined ? 'null' : parts.join('');
}
