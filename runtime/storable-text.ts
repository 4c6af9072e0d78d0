import { validationFailed, type ServiceError } from './errors/service-error.js';

/**
 * Text PostgreSQL cannot store: U+0000 (refused in `text`, "invalid byte
 * sequence for encoding UTF8: 0x00", and in `jsonb`, "unsupported Unicode
 * escape sequence") and unpaired UTF-16 surrogates (U+D800–U+DFFF), which
 * Node encodes to UTF-8 as U+FFFD without a word, so the stored value would
 * silently differ from the one sent, and which `jsonb` refuses outright.
 *
 * Every request's input is checked once, in dispatch() (before stage 1,
 * pipeline/storable-input.ts), so every protocol gets the same 422 from one
 * place; the few values that reach SQL without passing dispatch's Invocation
 * (an inbound webhook's raw body, an OIDC provider's ID token claims, a
 * decoded cursor) are checked where they are decoded, with this module.
 */

/** Where the first unstorable character is, and which kind it is. */
export interface UnstorableText {
  field: string;
  kind: 'nul' | 'surrogate';
}

/** Field names in answers are cut to this many characters. */
const FIELD_MAX = 200;

/** `String.prototype.isWellFormed` (Node 20; not in the ES2022 lib the build targets). */
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

export function kindOf(s: string): UnstorableText['kind'] | null {
  if (s.includes('\u0000')) return 'nul';
  return isWellFormed.call(s) ? null : 'surrogate';
}

/** A JSON escape of U+0000 or of a surrogate: the text may decode to unstorable text. */
const ESCAPED = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * A query value or argument holds JSON the operation decodes later (`filter`):
 * its escapes can make NUL or a lone surrogate out of plain ASCII. Only text
 * holding such an escape is decoded here (rarely: an escaped emoji pair), and
 * text that is not JSON is left to the operation's own parser and its 422.
 */
export function unstorableValue(name: string, value: string): UnstorableText | null {
  const kind = kindOf(name) ?? kindOf(value);
  if (kind !== null) return { field: shown(name), kind };
  if (!ESCAPED.test(value)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(value);
  } catch {
    return null;
  }
  return unstorableTextIn(decoded, name);
}

/** A field name as it can be shown: the offending characters as `\uXXXX`, cut to FIELD_MAX. */
export function shown(name: string): string {
  const safe = name.replace(/\u0000|\p{Cs}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`);
  return safe.length > FIELD_MAX ? `${safe.slice(0, FIELD_MAX)}…` : safe;
}

const join = (base: string, key: string): string => (base === '' ? key : `${base}.${key}`);

const isPlainContainer = (v: object): boolean => {
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** Containers deeper than this make `mayHold` answer true, leaving the value to the exact, iterative walk. */
const FAST_DEPTH = 100;

/**
 * The hot path: whether a value may hold unstorable text, allocating nothing
 * (no paths, no stack). True when it does, or when it is too deep to scan
 * recursively; false is exact.
 */
function mayHold(v: unknown, depth: number): boolean {
  if (typeof v === 'string') return kindOf(v) !== null;
  if (typeof v !== 'object' || v === null || !isPlainContainer(v)) return false;
  if (depth > FAST_DEPTH) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (mayHold(v[i], depth + 1)) return true;
    return false;
  }
  for (const key in v) {
    if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
    if (kindOf(key) !== null || mayHold((v as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/**
 * The first unstorable character in a JSON-like value (strings, object keys,
 * arrays, plain objects), with its path (`items[3].email`, `a.b`). Iterative,
 * so a deep value cannot overflow the stack; values that are not plain
 * containers (Dates, Buffers, Maps) are not looked into. Clean values (all
 * but a few) cost one allocation-free scan.
 */
export function unstorableTextIn(value: unknown, base = ''): UnstorableText | null {
  if (typeof value === 'string') {
    const kind = kindOf(value);
    return kind === null ? null : { field: shown(base), kind };
  }
  if (typeof value !== 'object' || value === null || !mayHold(value, 0)) return null;
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: base }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const kind = kindOf(v);
      if (kind !== null) return { field: shown(path), kind };
      continue;
    }
    if (typeof v !== 'object' || v === null || !isPlainContainer(v)) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const item: unknown = v[i];
        if (typeof item === 'string' || (typeof item === 'object' && item !== null)) stack.push({ v: item, path: `${path}[${i}]` });
      }
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const kind = kindOf(key);
      if (kind !== null) return { field: shown(join(path, key)), kind };
      const item = (v as Record<string, unknown>)[key];
      if (typeof item === 'string' || (typeof item === 'object' && item !== null)) stack.push({ v: item, path: join(path, key) });
    }
  }
  return null;
}

/** 422 `Request.NulCharacter` / `Request.LoneSurrogate` naming the field. */
export function unstorableTextError(found: UnstorableText): ServiceError {
  return found.kind === 'nul'
    ? validationFailed('Request.NulCharacter', `'${found.field}' contains U+0000 (NUL), which cannot be stored`, found.field)
    : validationFailed('Request.LoneSurrogate', `'${found.field}' contains an unpaired UTF-16 surrogate (U+D800–U+DFFF), which is not valid Unicode text`, found.field);
}

/** Throws the 422 when `value` holds unstorable text; `base` names it (`id_token`, `data`). */
export function refuseUnstorableIn(value: unknown, base = ''): void {
  const found = unstorableTextIn(value, base);
  if (found !== null) throw unstorableTextError(found);
}

