/**
 * Deep copy of plain JSON-compatible data, refusing anything else. The
 * in-process transport passes payloads and replies through it so that, as
 * over the wire, a Date, Map, class instance or function fails in the first
 * test instead of in cluster mode, and caller and actor never share a
 * mutable object (a reply must not be a live reference into actor state).
 */

const MAX_DEPTH = 100;

export class NonPlainDataError extends Error {
  /** Where in the value, e.g. `.items[2].at`; empty for the root. */
  path: string;
  constructor(readonly what: string) {
    super(what);
    this.name = 'NonPlainDataError';
    this.path = '';
  }
}

/** Allows null, booleans, strings, finite numbers, arrays and plain objects; `undefined` is kept as is. */
export function clonePlainData(value: unknown): unknown {
  return clone(value, 0);
}

function clone(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      throw new NonPlainDataError(`non-finite number ${String(value)}`);
    case 'object':
      if (value === null) return null;
      if (depth >= MAX_DEPTH) throw new NonPlainDataError(`nesting deeper than ${MAX_DEPTH} (a cycle?)`);
      return Array.isArray(value) ? cloneArray(value, depth) : cloneObject(value, depth);
    default:
      throw new NonPlainDataError(typeof value);
  }
}

function cloneArray(source: unknown[], depth: number): unknown[] {
  const out = new Array<unknown>(source.length);
  let i = 0;
  try {
    for (; i < source.length; i++) out[i] = clone(source[i], depth + 1);
  } catch (err) {
    if (err instanceof NonPlainDataError) err.path = `[${i}]${err.path}`;
    throw err;
  }
  return out;
}

function cloneObject(source: object, depth: number): Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(source);
  if (proto !== Object.prototype && proto !== null) {
    const name = (source as { constructor?: { name?: unknown } }).constructor?.name;
    throw new NonPlainDataError(`instance of ${typeof name === 'string' && name !== '' ? name : 'a class'}`);
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(source);
  let k = 0;
  try {
    for (; k < keys.length; k++) {
      const key = keys[k]!;
      const v = clone((source as Record<string, unknown>)[key], depth + 1);
      // Plain assignment of "__proto__" would set the prototype instead of a property.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
    }
  } catch (err) {
    if (err instanceof NonPlainDataError) err.path = `.${keys[k]}${err.path}`;
    throw err;
  }
  return out;
}
