/**
 * The fuzzers' strings: every suite (REST, GraphQL, gRPC, MCP) draws its
 * strings and JSON values from here, so each one also sends the text
 * PostgreSQL cannot store: U+0000 and unpaired UTF-16 surrogates (issue 22,
 * finding 3). A share of the generated strings, keys and JSON values carries
 * one such character at a random place; the server owes them a 422
 * (`Request.NulCharacter` / `Request.LoneSurrogate`), never a 5xx.
 */
import fc from 'fast-check';

/** NUL, and lone high and low surrogates at both ends of their ranges. */
export const UNSTORABLE_CHARS = ['\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF'] as const;

const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

/** Whether a string holds U+0000 or an unpaired surrogate. */
export const isUnstorable = (s: string): boolean => s.includes('\u0000') || !isWellFormed.call(s);

/** Whether any string or object key inside a JSON-like value is unstorable. */
export function holdsUnstorable(v: unknown): boolean {
  if (typeof v === 'string') return isUnstorable(v);
  if (Array.isArray(v)) return v.some(holdsUnstorable);
  if (typeof v === 'object' && v !== null) return Object.entries(v).some(([k, x]) => isUnstorable(k) || holdsUnstorable(x));
  return false;
}

/** `s` with one unstorable character inserted at `at` (mod its length + 1). */
const insert = (s: string, at: number, ch: string): string => {
  const i = at % (s.length + 1);
  return s.slice(0, i) + ch + s.slice(i);
};

/** Strings from `base`, one in `every` of them with an unstorable character inserted. */
export function withUnstorable(base: fc.Arbitrary<string>, every = 5): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: every - 1, arbitrary: base },
    { weight: 1, arbitrary: fc.tuple(base, fc.nat(), fc.constantFrom(...UNSTORABLE_CHARS)).map(([s, at, ch]) => insert(s, at, ch)) },
  );
}

/** `fc.string`, with unstorable characters mixed in. */
export const fuzzString = (constraints: fc.StringConstraints = {}): fc.Arbitrary<string> => withUnstorable(fc.string(constraints));

/**
 * The value with one string or key (the `pick`-th, counting both) given an
 * unstorable character; a value without strings comes back unchanged.
 */
function injectInto(value: unknown, pick: number, ch: string): unknown {
  let slots = 0;
  const count = (v: unknown): void => {
    if (typeof v === 'string') slots++;
    else if (Array.isArray(v)) v.forEach(count);
    else if (typeof v === 'object' && v !== null) for (const [, x] of Object.entries(v)) { slots++; count(x); }
  };
  count(value);
  if (slots === 0) return value;
  let target = pick % slots;
  const rebuild = (v: unknown): unknown => {
    if (typeof v === 'string') return target-- === 0 ? insert(v, pick, ch) : v;
    if (Array.isArray(v)) return v.map(rebuild);
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const key = target-- === 0 ? insert(k, pick, ch) : k;
        Object.defineProperty(out, key, { value: rebuild(x), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return v;
  };
  return rebuild(value);
}

/** `fc.jsonValue`, a share of whose values carry an unstorable character in one string or key. */
export function fuzzJsonValue(constraints: fc.JsonSharedConstraints = {}): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue(constraints) },
    { weight: 1, arbitrary: fc.tuple(fc.jsonValue(constraints), fc.nat(), fc.constantFrom(...UNSTORABLE_CHARS)).map(([v, pick, ch]) => injectInto(v, pick, ch)) },
  );
}

/**
 * A value's JSON text as it would go on the wire. JSON.stringify writes lone
 * surrogates as `\udXXX` escapes (well-formed JSON since ES2019), so the text
 * itself is valid UTF-8 and the server sees the surrogate only once it parses.
 */
export const jsonText = (v: unknown): string => JSON.stringify(v);
