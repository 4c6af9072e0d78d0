/**
 * fast-check generators for bad input, each tagged with the answer the
 * platform owes it, so a property can assert the exact outcome instead of
 * "some 4xx". Tags are decided by construction (what the generator broke),
 * not by re-running the server's validator.
 */
import fc from 'fast-check';
import { fuzzJsonValue, fuzzString, holdsUnstorable, withUnstorable } from '../../support/unstorable-text.js';

export const TIERS = ['free', 'pro', 'enterprise'] as const;
export const STATUSES = ['open', 'paid', 'shipped'] as const;
export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

/** The entities the tests define (also the oracle's view of them). */
export const CUSTOMER_DEF = {
  entityName: 'Customer',
  fields: [
    { name: 'email', type: 'String', nullable: false, unique: true },
    { name: 'tier', type: 'Enum', nullable: false, values: [...TIERS] },
    { name: 'age', type: 'Int', nullable: true },
    { name: 'balance', type: 'Decimal', nullable: true },
    { name: 'since', type: 'DateTime', nullable: true },
    { name: 'meta', type: 'JSON', nullable: true },
    { name: 'vip', type: 'Boolean', nullable: false, default: false },
  ],
};
export const ORDER_DEF = {
  entityName: 'Order',
  softDelete: true,
  fields: [
    { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
    { name: 'total', type: 'Decimal', nullable: false },
    { name: 'status', type: 'Enum', nullable: false, values: [...STATUSES] },
  ],
};

export type EntityKey = 'customers' | 'orders';
const GENERATED = ['id', 'createdAt', 'updatedAt', 'concurrencyToken', 'deletedAt'];
/** Fields a filter, sort or `fields` may name, with their type. */
export const QUERYABLE: Record<EntityKey, Record<string, string>> = {
  customers: { id: 'ID', email: 'String', tier: 'Enum', age: 'Int', balance: 'Decimal', since: 'DateTime', meta: 'JSON', vip: 'Boolean', createdAt: 'DateTime', updatedAt: 'DateTime' },
  orders: { id: 'ID', customer: 'ID', total: 'Decimal', status: 'Enum', createdAt: 'DateTime', updatedAt: 'DateTime' },
};
export const RELATIONS: Record<EntityKey, string[]> = { customers: ['orders'], orders: ['customer'] };
export const ENTITY_NAME: Record<EntityKey, string> = { customers: 'Customer', orders: 'Order' };
/** Own-property lookup: names like `constructor` must not resolve through the prototype. */
export const isQueryable = (e: EntityKey, name: string): boolean => Object.prototype.hasOwnProperty.call(QUERYABLE[e], name);

/** Strings that look like SQL (or other injection); all but the NUL one are valid String values. */
export const SQLISH = [
  "'; DROP TABLE customers; --",
  "Robert'); DROP TABLE \"Customer\";--",
  '1 OR 1=1',
  "' OR '1'='1",
  '" OR ""="',
  '$1',
  '$1::text',
  '$$ || pg_sleep(5) || $$',
  "'; SELECT pg_sleep(5); --",
  "' UNION SELECT id, slug FROM plinth.tenants --",
  '%',
  '_',
  '\\',
  '%\\_',
  "E'\\x41'",
  '\\x00',
  'NULL',
  'null',
  '*/ DELETE FROM x /*',
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  '\u202egnp.exe',
  '😀 café Ωμέγα 中文',
  '\r\n\t',
  '\u2028\u2029',
] as const;
const sqlish = fc.constantFrom(...SQLISH);
const noNul = (s: string): boolean => !s.includes('\u0000');

/**
 * String values: SQL-looking, random code points, random graphemes, and mixes;
 * one in five carries U+0000 or a lone surrogate (test/support/unstorable-text.ts),
 * which the server refuses before anything else (`unstorableFields`).
 */
export const textArb = withUnstorable(fc.oneof(
  sqlish,
  fc.string({ unit: 'binary', maxLength: 30 }).filter(noNul),
  fc.string({ unit: 'grapheme', maxLength: 30 }).filter(noNul),
  fc.tuple(sqlish, fc.string({ unit: 'grapheme-ascii', maxLength: 10 })).map(([a, b]) => a + b),
));

/** The reasons of a 422 for text PostgreSQL cannot store (runtime/storable-text.ts). */
export const UNSTORABLE_REASON = /^Request\.(NulCharacter|LoneSurrogate)$/;

/** Top-level keys of a body whose key or value holds unstorable text: the 422's `field` starts with one of them. */
export function unstorableFields(body: Record<string, unknown>): string[] {
  return Object.keys(body).filter((k) => holdsUnstorable(k) || holdsUnstorable(body[k]));
}

/** `ok`: accepted; `bad`: refused by input validation, naming this field; `db`: refused with 422 by the storage layer; `either`: stored verbatim or refused with 422. */
export type Verdict = 'ok' | 'bad' | 'db' | 'either' | 'dup' | 'existing';
export const ABSENT: unique symbol = Symbol('absent');
export interface FieldCase {
  v: unknown;
  k: Verdict;
}
const tag = (k: Verdict) => (a: fc.Arbitrary<unknown>): fc.Arbitrary<FieldCase> => a.map((v) => ({ v, k }));
const ok = tag('ok');
const bad = tag('bad');
const db = tag('db');
const c = <T>(...vals: T[]): fc.Arbitrary<T> => fc.constantFrom(...vals);
/** Heterogeneous constants (values of any JSON type). */
const u = (...vals: unknown[]): fc.Arbitrary<unknown> => fc.constantFrom(...vals);
const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });

export const decimalStringArb = fc
  .tuple(c('', '-', '+'), fc.stringMatching(/^\d{1,40}$/), fc.option(fc.stringMatching(/^\d{1,30}$/), { nil: undefined }))
  .map(([s, i, f]) => `${s}${i}${f === undefined ? '' : `.${f}`}`);
const finiteDouble = fc.double({ noNaN: true, noDefaultInfinity: true });
const BAD_DECIMALS = ['1e5', 'abc', '1.2.3', '', ' 1', '1 ', 'NaN', 'Infinity', '-', '.5', '5.', '0x1F', '1,5', '١٢', '1_000'];

/** ISO 8601 timestamps with a zone PostgreSQL can store (offsets up to ±15:59), in several precisions. */
const MIN_T = Date.parse('0003-01-01T00:00:00Z');
const MAX_T = Date.parse('9998-12-31T00:00:00Z');
export const isoArb = fc
  .record({ t: fc.integer({ min: MIN_T, max: MAX_T }), off: fc.integer({ min: -(15 * 60 + 59), max: 15 * 60 + 59 }), style: c('ms', 's', 'min', 'us', 'z'), us: fc.integer({ min: 0, max: 999 }) })
  .map(({ t, off, style, us }) => {
    if (style === 'z') return new Date(t).toISOString();
    const local = new Date(t + off * 60_000).toISOString().slice(0, 23); // YYYY-MM-DDTHH:MM:SS.mmm
    const a = Math.abs(off);
    const zone = `${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
    const body = style === 'ms' ? local : style === 's' ? local.slice(0, 19) : style === 'min' ? local.slice(0, 16) : `${local}${String(us).padStart(3, '0')}`;
    return body + zone;
  });
/** Timestamp-shaped strings JavaScript accepts but PostgreSQL rejects (no such day). */
const DB_BAD_TIMESTAMPS = ['2023-02-30T00:00:00Z', '2023-02-31T12:00Z', '2023-04-31T00:00:00+02:00'];
const BAD_TIMESTAMPS = [
  '2023-01-01', '2023-01-01T00:00', '2023-01-01 00:00:00Z', 'yesterday', 'now()', '', '2023-13-01T00:00:00Z', '2023-01-32T00:00:00Z',
  '2023-01-01T25:00:00Z', '0000-01-01T00:00:00Z', '2023-01-01T00:00:00+24:00', '2023-01-01T00:00:00Z; DROP TABLE x',
  // Offsets beyond ±15:59: JavaScript parses them, PostgreSQL cannot store them.
  '2023-01-01T00:00:00+16:00', '2023-06-01T12:00-20:30',
];

const jsonArb = fuzzJsonValue({ maxDepth: 3 });

export const customerFields = {
  email: fc.oneof(
    w(8, ok(textArb)),
    w(1, fc.constant<FieldCase>({ v: null, k: 'dup' })),
    w(3, bad(u(ABSENT, null, 42, true, [], {}, ['a@b'], 'nul\u0000byte', '\u0000', 'lone\ud800surrogate', '\udfff'))),
    // Long unique strings: stored verbatim, or refused when too large for the unique index.
    w(1, tag('either')(fc.string({ unit: 'binary', minLength: 1000, maxLength: 4000 }).filter(noNul))),
  ),
  tier: fc.oneof(w(6, ok(c(...TIERS))), w(1, bad(fc.oneof(u(ABSENT, null, 'FREE', ' free', 'free ', '', 'gold', 0, ['free'], { eq: 'free' }), sqlish)))),
  age: fc.oneof(
    w(6, ok(fc.oneof(u(ABSENT, null, 0, -1, INT32_MIN, INT32_MAX), fc.integer({ min: INT32_MIN, max: INT32_MAX })))),
    w(1, bad(u(2147483648, -2147483649, 1.5, -0.5, '5', '', true, [], {}, 1e20, Number.MAX_SAFE_INTEGER))),
  ),
  balance: fc.oneof(
    w(6, ok(fc.oneof(u(ABSENT, null, '0', '-0.00', '000123.4500', '12.50'), decimalStringArb, finiteDouble))),
    w(1, bad(fc.oneof(u(true, {}, [], ...BAD_DECIMALS), sqlish))),
  ),
  since: fc.oneof(
    w(6, ok(fc.oneof(u(ABSENT, null, '2020-01-01T24:00Z'), isoArb))),
    w(1, bad(fc.oneof(u(1700000000000, true, ...BAD_TIMESTAMPS), sqlish))),
    w(1, db(c(...DB_BAD_TIMESTAMPS))),
  ),
  meta: fc.oneof(
    w(6, ok(fc.oneof(u(ABSENT, null, { "'; DROP TABLE x; --": '1 OR 1=1', $1: ['$2', { '%': '_' }] }), jsonArb, fc.dictionary(sqlish, sqlish)))),
    w(1, bad(u({ a: '\u0000' }, { 'k\u0000': 1 }, ['x\u0000'], '\u0000'))),
    // Lone surrogates are valid JSON escapes but not storable text: refused before storage (Request.LoneSurrogate).
    w(1, db(u('\ud800', { s: '\udc00x' }))),
  ),
  vip: fc.oneof(w(6, ok(u(ABSENT, true, false))), w(1, bad(u(null, 'true', 1, 0, [])))),
};

const CUSTOMER_KEYS = new Set(['email', 'tier', 'age', 'balance', 'since', 'meta', 'vip']);
const ORDER_KEYS = new Set(['customer', 'total', 'status']);

/** Extra keys: unknown ones (UnknownField) or generated ones (ReadOnlyField). */
const extraKeyArb = (known: Set<string>) =>
  fc.oneof(
    fc.record({ key: fc.oneof(sqlish, c('__proto__', 'constructor', 'EMAIL', 'Email', 'email ', 'tier\u0000', ''), fuzzString({ minLength: 1, maxLength: 12 })).filter((k) => !known.has(k) && !GENERATED.includes(k)), reason: fc.constant('UnknownField') }),
    fc.record({ key: c(...GENERATED), reason: fc.constant('ReadOnlyField') }),
  ).chain((x) => fc.record({ key: fc.constant(x.key), reason: fc.constant(x.reason), value: fuzzJsonValue({ maxDepth: 1 }) }));

export interface ExtraKey {
  key: string;
  reason: string;
  value: unknown;
}

export type CustomerCase = { [K in keyof typeof customerFields]: FieldCase } & { extra: ExtraKey[] };

const allOk = <T extends Record<string, fc.Arbitrary<FieldCase>>>(fields: T) => fields;

/** Mostly-broken customer bodies, plus a share where every field is valid (SQL-looking strings included). */
export const customerCaseArb: fc.Arbitrary<CustomerCase> = fc.oneof(
  w(3, fc.record({ ...customerFields, extra: fc.oneof(w(5, fc.constant([] as ExtraKey[])), w(2, fc.array(extraKeyArb(CUSTOMER_KEYS), { minLength: 1, maxLength: 2 }))) })),
  w(2, fc.record({
    ...allOk({
      email: ok(textArb),
      tier: ok(c(...TIERS)),
      age: ok(fc.oneof(u(ABSENT, null), fc.integer({ min: INT32_MIN, max: INT32_MAX }))),
      balance: ok(fc.oneof(u(ABSENT, null), decimalStringArb, finiteDouble)),
      since: ok(fc.oneof(u(ABSENT, null), isoArb)),
      meta: ok(fc.oneof(u(ABSENT, null), jsonArb, fc.dictionary(sqlish, sqlish))),
      vip: ok(u(ABSENT, true, false)),
    }),
    extra: fc.constant([] as ExtraKey[]),
  })),
);

export const orderFields = {
  customer: fc.oneof(
    w(6, fc.boolean().map<FieldCase>((upper) => ({ v: upper, k: 'existing' }))),
    // A well-formed id of no row: the foreign key refuses it (422 ReferenceNotFound).
    w(1, db(fc.uuid())),
    w(2, bad(fc.oneof(u(ABSENT, null, 'not-a-uuid', 5, {}, '00000000-0000-0000-0000-00000000000g', '{00000000-0000-0000-0000-000000000000}', ''), sqlish))),
  ),
  total: fc.oneof(w(6, ok(fc.oneof(decimalStringArb, finiteDouble))), w(1, bad(fc.oneof(u(ABSENT, null, true, {}, ...BAD_DECIMALS), sqlish)))),
  status: fc.oneof(w(6, ok(c(...STATUSES))), w(1, bad(fc.oneof(u(ABSENT, null, 'OPEN', 'closed', 1, ['open']), sqlish)))),
};
export type OrderCase = { [K in keyof typeof orderFields]: FieldCase } & { extra: ExtraKey[] };
export const orderCaseArb: fc.Arbitrary<OrderCase> = fc.record({
  ...orderFields,
  extra: fc.oneof(w(5, fc.constant([] as ExtraKey[])), w(1, fc.array(extraKeyArb(ORDER_KEYS), { minLength: 1, maxLength: 2 }))),
});

// ---------------------------------------------------------------- raw bodies

const TRICKY_BODIES = [
  '', ' ', '\n', 'null', '[]', '{}', '"str"', '0', '-0', 'true', '1e999', '{"email":', '{"email":"a@b","tier":"free",}', "{'email':'x'}",
  '{"email":"a"}{"x":1}', 'NaN', 'Infinity', '-', '{"__proto__":{"admin":true}}', '\uFEFF{}', '{"email":"a@b","tier":"free"', '{"a":1e999}',
  '[{"email":"a@b","tier":"free"}]', '{"items":[]}', '{"items":{}}', '{"items":[{"email":"x","tier":"free"}],"extra":1}', '{"items":[1,2]}',
  `${'['.repeat(100)}${']'.repeat(100)}`, `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`, `${'['.repeat(65)}`, '"\\ud800"', '{"email":"\\u0000"}',
  '{"email" "x"}', '{"email":"x",,"tier":"free"}', '\u0000', '{"tier":"free","email":"a@b"} trailing', 'undefined', '{"email":"\\x41"}',
];
const JUNK = ['{', '}', '[', ']', '"', ',', ':', '\\', '\u0000', 'x', '\n', '\ud800', '1e', '-', 'nul'];

/** Bodies for create routes: random text, random bytes, random JSON of the wrong shape, and near-miss JSON. */
export const rawBodyArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
  fuzzString({ maxLength: 200 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
  fc.uint8Array({ maxLength: 200 }),
  fc.json({ maxDepth: 4 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
  fuzzJsonValue({ maxDepth: 4 }).map((v) => new Uint8Array(Buffer.from(JSON.stringify(v), 'utf8'))),
  c(...TRICKY_BODIES).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
  fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), c(...JUNK), c('insert', 'delete', 'truncate')).map(([s, at, junk, op]) => {
    const i = s.length === 0 ? 0 : at % s.length;
    const out = op === 'insert' ? s.slice(0, i) + junk + s.slice(i) : op === 'delete' ? s.slice(0, i) + s.slice(i + 1) : s.slice(0, i);
    return new Uint8Array(Buffer.from(out, 'utf8'));
  }),
);

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export function jsonDepth(v: unknown): number {
  if (Array.isArray(v)) return 1 + v.reduce<number>((m, x) => Math.max(m, jsonDepth(x)), 0);
  if (isObject(v)) return 1 + Object.values(v).reduce<number>((m, x) => Math.max(m, jsonDepth(x)), 0);
  return 0;
}

/**
 * The reason code a raw body sent as application/json to a create route
 * must get (always 422): byte-level and syntax-level problems first,
 * then shape problems. `created` is true when the body is in fact a
 * valid create (never expected from these generators; asserted as such).
 */
export function rawBodyReason(bytes: Uint8Array, entity: string, batch: boolean): string | RegExp {
  const shape = batch ? /^Batch\./ : new RegExp(`^${entity}Validation\\.`);
  if (bytes.length === 0) return batch ? 'Batch.InvalidBody' : `${entity}Validation.InvalidBody`;
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return 'Request.InvalidUtf8';
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Deep bracket runs are refused before parsing, whatever follows them.
    return /^Request\.(MalformedJson|TooDeep)$/;
  }
  if (jsonDepth(value) > 64) return 'Request.TooDeep';
  if (holdsUnstorable(value)) return UNSTORABLE_REASON;
  if (batch) {
    if (!isObject(value) || !Array.isArray(value.items)) return 'Batch.InvalidBody';
    return new RegExp(`^(Batch\\.|${entity}Validation\\.)`);
  }
  if (!isObject(value)) return `${entity}Validation.InvalidBody`;
  return shape;
}

// ---------------------------------------------------------------- filters

/** A generated filter with what the parser must find in it. */
export interface F {
  json: Record<string, unknown>;
  /** Reasons (Filter.<reason>) one of which must be reported; empty when valid. */
  bad: string[];
  /** Object nesting as the parser counts it (this object = 1). */
  depth: number;
  /** Keys over all filter objects (the parser's node count). */
  nodes: number;
}

const leaf = (json: Record<string, unknown>, bad: string[] = []): F => ({ json, bad, depth: 1, nodes: Object.keys(json).length });
const leafOk = (a: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<F> => a.map((j) => leaf(j));
const leafBad = (reason: string, a: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<F> => a.map((j) => leaf(j, [reason]));

const int32 = fc.integer({ min: INT32_MIN, max: INT32_MAX });
const cmp = c('eq', 'ne', 'gt', 'lt');
const likePattern = fc.oneof(
  withUnstorable(fc.string({ unit: 'binary', maxLength: 20 })),
  fc.tuple(c('%', '_', ''), textArb, c('%', '_', '', '\\%', '\\_')).map(([a, b, z]) => a + b + z),
  sqlish,
);
/** What the parser says about a `like` pattern: too long, NUL, or ending in an unfinished escape. */
const likeVerdict = (p: string): string[] => (p.length > 256 || p.includes('\u0000') || /(^|[^\\])(\\\\)*\\$/.test(p) ? ['InvalidValue'] : []);
const OPS = ['eq', 'ne', 'gt', 'lt', 'in', 'between', 'like', 'isNull'];
const NOT_OPS = ['gte', 'lte', 'EQ', '$eq', 'eq ', 'contains', 'regex', 'ilike', '', 'isnull', '__proto__', "eq'; DROP TABLE x; --"];

const customerLeaves: fc.Arbitrary<F> = fc.oneof(
  // valid
  leafOk(fc.record({ op: cmp, s: textArb }).map(({ op, s }) => ({ email: { [op]: s } }))),
  likePattern.map((p) => leaf({ email: { like: p } }, likeVerdict(p))),
  leafOk(fc.array(textArb, { minLength: 1, maxLength: 5 }).map((xs) => ({ email: { in: xs } }))),
  leafOk(fc.record({ op: c('eq', 'ne'), v: c(...TIERS) }).map(({ op, v }) => ({ tier: { [op]: v } }))),
  leafOk(fc.subarray([...TIERS], { minLength: 1 }).map((xs) => ({ tier: { in: xs } }))),
  leafOk(c({ tier: { like: 'f%' } }, { tier: { gt: 'free' } })),
  leafOk(fc.record({ op: cmp, v: int32 }).map(({ op, v }) => ({ age: { [op]: v } }))),
  leafOk(fc.tuple(int32, int32).map(([a, b]) => ({ age: { between: [a, b] } }))),
  leafOk(fc.array(int32, { minLength: 1, maxLength: 20 }).map((xs) => ({ age: { in: xs } }))),
  leafOk(fc.tuple(int32, int32).map(([a, b]) => ({ age: { gt: a, lt: b } }))),
  leafOk(fc.record({ f: c('age', 'email', 'balance', 'since', 'meta', 'tier'), b: fc.boolean() }).map(({ f, b }) => ({ [f]: { isNull: b } }))),
  leafOk(fc.record({ op: cmp, v: fc.oneof(decimalStringArb, finiteDouble) }).map(({ op, v }) => ({ balance: { [op]: v } }))),
  leafOk(fc.record({ f: c('since', 'createdAt', 'updatedAt'), op: cmp, v: isoArb }).map(({ f, op, v }) => ({ [f]: { [op]: v } }))),
  leafOk(fc.boolean().map((b) => ({ vip: { eq: b } }))),
  leafOk(fc.uuid().map((u) => ({ id: { eq: u } }))),
  leafOk(fc.array(fc.uuid(), { minLength: 1, maxLength: 5 }).map((xs) => ({ id: { in: xs } }))),
  leafOk(fc.constant({})),
  // invalid
  leafBad('UnknownField', fc.record({ k: fc.oneof(sqlish, c('deletedAt', 'Email', 'concurrencyToken', 'AND', 'customer', '__proto__'), fuzzString({ maxLength: 10 })), v: fuzzJsonValue({ maxDepth: 1 }) })
    .filter(({ k }) => !isQueryable('customers', k) && !['and', 'or', 'not'].includes(k)).map(({ k, v }) => ({ [k]: { eq: v } }))),
  leafBad('UnknownOperator', fc.record({ f: c('age', 'email', 'tier', 'balance'), op: c(...NOT_OPS) }).map(({ f, op }) => ({ [f]: { [op]: 1 } }))),
  leafBad('InvalidValue', c<Record<string, unknown>>(
    { age: { eq: '5' } }, { age: { eq: 1.5 } }, { age: { gt: 2 ** 31 } }, { age: { eq: null } }, { tier: { eq: 'gold' } }, { tier: { in: ['free', 'gold'] } },
    { email: { eq: 5 } }, { email: { eq: 'a\u0000' } }, { email: { eq: 'x\ud800' } }, { email: { in: ['a', 5] } }, { since: { eq: 'yesterday' } },
    { since: { gt: '2023-01-01T00:00:00+20:00' } }, { since: { lt: '0000-01-01T00:00:00Z' } }, { createdAt: { gt: 'now()' } }, { vip: { eq: 'true' } },
    { age: { between: [1] } }, { age: { between: 5 } }, { age: { between: [1, 'x'] } }, { age: { in: [] } }, { age: { in: 5 } }, { email: { like: 5 } },
    { email: { like: 'x'.repeat(257) } }, { email: { like: 'abc\\' } }, { email: { like: '%\\\\\\' } }, { id: { eq: 'not-a-uuid' } }, { id: { eq: "1' OR '1'='1" } },
    { age: { isNull: 'yes' } }, { age: { isNull: null } }, { balance: { eq: '1e5' } }, { balance: { gt: 'abc' } }, { balance: { lt: "0; DROP TABLE x" } },
  )),
  leafBad('UnsupportedOperator', c<Record<string, unknown>>(
    { meta: { eq: {} } }, { meta: { ne: 1 } }, { meta: { in: [1] } }, { meta: { gt: 1 } }, { meta: { like: '%' } }, { vip: { gt: true } },
    { vip: { between: [false, true] } }, { vip: { like: 't%' } }, { age: { like: '1%' } }, { balance: { like: '1%' } }, { since: { like: '2%' } },
    { id: { like: 'a%' } }, { createdAt: { like: '2%' } },
  )),
  leafBad('InvalidFilter', c<Record<string, unknown>>(
    { age: 5 }, { age: null }, { age: [] }, { age: 'eq' }, { age: {} }, { and: [] }, { and: {} }, { or: 5 }, { or: null }, { not: [] }, { not: 5 },
    { not: null }, { and: [5] }, { or: [[]] }, { email: "'; DROP TABLE x; --" },
  )),
  // big `in` lists around the 1,000-value limit
  fc.integer({ min: 990, max: 1010 }).map((n) => leaf({ age: { in: Array.from({ length: n }, (_, i) => i) } }, n > 1000 ? ['TooLarge'] : [])),
);

/** Composes leaves with and/or/not and key merges, tracking depth, node count and expected reasons. */
function composed(leaves: fc.Arbitrary<F>, levels: number): fc.Arbitrary<F> {
  if (levels === 0) return leaves;
  const inner = composed(leaves, levels - 1);
  return fc.oneof(
    w(3, leaves),
    w(2, fc.record({ k: c('and', 'or'), items: fc.array(inner, { minLength: 1, maxLength: 3 }) }).map(({ k, items }) => ({
      json: { [k]: items.map((i) => i.json) },
      bad: items.flatMap((i) => i.bad),
      depth: 1 + Math.max(...items.map((i) => i.depth)),
      nodes: 1 + items.reduce((n, i) => n + i.nodes, 0),
    }))),
    w(1, inner.map((x) => ({ json: { not: x.json }, bad: x.bad, depth: 1 + x.depth, nodes: 1 + x.nodes }))),
    w(1, fc.tuple(inner, inner).filter(([a, b]) => Object.keys(a.json).every((k) => !(k in b.json))).map(([a, b]) => ({
      json: { ...a.json, ...b.json }, bad: [...a.bad, ...b.bad], depth: Math.max(a.depth, b.depth), nodes: a.nodes + b.nodes,
    }))),
  );
}

const customerFilter = composed(customerLeaves, 3);

/** A reference field nests a filter on the related entity; `{}` there names no operator. */
const related = (x: F): F => ({
  json: { customer: x.json },
  bad: Object.keys(x.json).length === 0 ? [...x.bad, 'InvalidFilter'] : x.bad,
  depth: 1 + x.depth,
  nodes: 1 + x.nodes,
});

const orderLeaves: fc.Arbitrary<F> = fc.oneof(
  leafOk(fc.record({ op: c('eq', 'ne'), v: c(...STATUSES) }).map(({ op, v }) => ({ status: { [op]: v } }))),
  leafOk(fc.record({ op: cmp, v: fc.oneof(decimalStringArb, finiteDouble) }).map(({ op, v }) => ({ total: { [op]: v } }))),
  leafOk(fc.uuid().map((u) => ({ customer: { eq: u } }))),
  leafOk(fc.boolean().map((b) => ({ customer: { isNull: b } }))),
  composed(customerLeaves, 1).map(related),
  leafBad('UnsupportedOperator', c<Record<string, unknown>>({ customer: { like: 'a%' } }, { id: { like: '%' } })),
  leafBad('InvalidValue', c<Record<string, unknown>>({ customer: { eq: 'nope' } }, { customer: { in: ["' OR 1=1 --"] } }, { status: { eq: 'OPEN' } }, { total: { eq: 'ten' } })),
  leafBad('InvalidFilter', c<Record<string, unknown>>({ customer: {} }, { customer: 5 }, { status: {} })),
  leafBad('UnknownOperator', fc.uuid().map((u) => ({ customer: { eq: u, email: { eq: 'x' } } }))),
  leafBad('UnknownField', c<Record<string, unknown>>({ deletedAt: { isNull: true } }, { email: { eq: 'x' } }, { customer: { nope: { eq: 1 } } })),
);
const orderFilter = composed(orderLeaves, 2);

/** Deep chains and very wide filters around the depth (8) and node (200) limits. */
const deepOrWide: fc.Arbitrary<F> = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((n) => {
    let json: Record<string, unknown> = { age: { eq: 1 } };
    for (let i = 0; i < n; i++) json = { not: json };
    return { json, bad: [], depth: n + 1, nodes: n + 1 };
  }),
  fc.integer({ min: 1, max: 40 }).map((n) => {
    let json: Record<string, unknown> = { vip: { eq: true } };
    for (let i = 0; i < n; i++) json = { and: [json] };
    return { json, bad: [], depth: n + 1, nodes: n + 1 };
  }),
  fc.integer({ min: 150, max: 260 }).map((n) => ({ json: { or: Array.from({ length: n }, (_, i) => ({ age: { eq: i } })) }, bad: [], depth: 2, nodes: n + 1 })),
);

/** A filter case: the text to send and the reasons one of which must be reported (none: 200). */
export interface FilterCase {
  entity: EntityKey;
  text: string;
  reasons: string[] | 'anyFilter';
}

/** A filter holding unstorable text is refused by dispatch() before the filter parser sees it. */
const UNSTORABLE_REASONS = ['Request.NulCharacter', 'Request.LoneSurrogate'];

const fromF = (entity: EntityKey) => (f: F): FilterCase => {
  if (holdsUnstorable(f.json)) return { entity, text: JSON.stringify(f.json), reasons: UNSTORABLE_REASONS };
  const reasons = [...f.bad];
  if (f.depth > 8) reasons.push('TooDeep');
  if (f.nodes > 200) reasons.push('TooLarge');
  const text = JSON.stringify(f.json);
  if (Buffer.byteLength(text) > 16 * 1024) reasons.push('TooLarge');
  return { entity, text, reasons: [...new Set(reasons)].map((r) => `Filter.${r}`) };
};

/** Raw filter texts: random strings and random JSON (mostly unknown fields), judged by a small oracle. */
const rawFilter: fc.Arbitrary<FilterCase> = fc
  .record({ entity: c<EntityKey>('customers', 'orders'), text: fc.oneof(fuzzString({ maxLength: 60 }), fc.json({ maxDepth: 3 }), fuzzJsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), c('null', '[]', '"x"', '1', '{"age":{"eq":1}', "{'age':{'eq':1}}", 'x'.repeat(17 * 1024), `{"email":{"eq":"${'y'.repeat(16 * 1024)}"}}`)) })
  .map(({ entity, text: generated }): FilterCase => {
    // A lone surrogate cannot travel in a URL (encoders write U+FFFD's bytes): send what arrives.
    const text = generated.replace(/\p{Cs}/gu, '\uFFFD');
    if (text.includes('\u0000')) return { entity, text, reasons: ['Request.NulCharacter'] };
    if (text === '') return { entity, text, reasons: [] }; // an empty filter parameter is no filter
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return { entity, text, reasons: [Buffer.byteLength(text) > 16 * 1024 ? 'Filter.TooLarge' : 'Filter.MalformedJson'] };
    }
    if (holdsUnstorable(v)) return { entity, text, reasons: UNSTORABLE_REASONS };
    if (Buffer.byteLength(text) > 16 * 1024) return { entity, text, reasons: ['Filter.TooLarge'] };
    if (!isObject(v)) return { entity, text, reasons: ['Filter.InvalidFilter'] };
    const keys = Object.keys(v);
    if (keys.length === 0) return { entity, text, reasons: [] };
    if (keys.every((k) => !isQueryable(entity, k) && !['and', 'or', 'not'].includes(k))) return { entity, text, reasons: ['Filter.UnknownField'] };
    return { entity, text, reasons: 'anyFilter' };
  });

export const filterCaseArb: fc.Arbitrary<FilterCase> = fc.oneof(
  w(4, customerFilter.map(fromF('customers'))),
  w(2, orderFilter.map(fromF('orders'))),
  w(1, deepOrWide.map(fromF('customers'))),
  w(1, rawFilter),
);

// ---------------------------------------------------------------- list parameters

const sortToken = (e: EntityKey) => fc.oneof(
  c(...Object.keys(QUERYABLE[e]).flatMap((f) => [f, `-${f}`, `+${f}`])),
  c('', ' ', '-', '+', '--email', 'Email', 'deletedAt', 'concurrencyToken', 'email;DROP TABLE x', 'email desc', 'customer', 'total', '-meta', 'RANDOM()'),
  fuzzString({ maxLength: 8 }),
);
const fieldToken = (e: EntityKey) => fc.oneof(c(...Object.keys(QUERYABLE[e]), 'concurrencyToken'), c('password', 'deletedAt', 'Email', 'x; DROP TABLE y', '*', 'email)'), fuzzString({ maxLength: 6 }));
const includeToken = (e: EntityKey) => fc.oneof(c(...RELATIONS[e]), c('orders', 'customer', 'customers', 'Order', '*', "orders'--"), fuzzString({ maxLength: 6 }));
const intText = fc.oneof(
  c('', '0', '1', '2', '200', '201', '1000000', '1000001', '999999999', '1000000000', '-1', '1.5', '1e2', ' 1', '01', 'abc', '1;DROP TABLE x', '0x10', '+1', '٣'),
  fc.nat().map(String),
  fuzzString({ maxLength: 5 }),
);
const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined, freq: 2 });

export interface ListCase {
  entity: EntityKey;
  sort?: string | undefined;
  fields?: string | undefined;
  include?: string | undefined;
  page?: string | undefined;
  pageSize?: string | undefined;
  includeTotal?: string | undefined;
  /** Which cursor to send: a random string, a real one, or a real one with forged values. */
  cursor?: { kind: 'random'; text: string } | { kind: 'real' | 'forged'; from: 'default' | '-email'; junk: unknown[] } | undefined;
}

export const listCaseArb: fc.Arbitrary<ListCase> = c<EntityKey>('customers', 'orders').chain((entity) => fc.record({
  entity: fc.constant(entity),
  sort: opt(fc.array(sortToken(entity), { maxLength: 10 }).map((ts) => ts.join(','))),
  fields: opt(fc.array(fieldToken(entity), { maxLength: 5 }).map((ts) => ts.join(','))),
  include: opt(fc.array(includeToken(entity), { maxLength: 12 }).map((ts) => ts.join(','))),
  page: opt(intText),
  pageSize: opt(intText),
  includeTotal: opt(c('true', 'false', 'TRUE', '1', '', 'yes')),
  cursor: opt(fc.oneof(
    fc.oneof(fuzzString({ maxLength: 40 }), fc.base64String({ maxLength: 40 }), fc.json({ maxDepth: 2 }).map((s) => Buffer.from(s).toString('base64url')))
      .map((text) => ({ kind: 'random' as const, text })),
    fc.record({
      kind: c('real' as const, 'forged' as const),
      from: c('default' as const, '-email' as const),
      junk: fc.array(fc.oneof(u('yesterday', '2023-01-01T00:00:00+20:00', 'not-a-uuid', "'; DROP TABLE x; --", 1e308, -1, true, null, '', '\u0000'), fc.uuid(), isoArb, fc.jsonValue({ maxDepth: 1 })), { minLength: 1, maxLength: 3 }),
    }),
  )),
}));

/** The server's positive-integer rule for page and pageSize. */
export function intParamReasons(name: 'page' | 'pageSize', text: string | undefined, max: number, tooLarge: string): string[] {
  if (text === undefined || text === '') return [];
  const invalid = `Query.Invalid${name[0]!.toUpperCase()}${name.slice(1)}`;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) return [invalid];
  return Number(text) > max ? [tooLarge] : [];
}

/** Normalized sort (what a cursor is bound to) or the reason the sort is refused. */
export function sortOutcome(e: EntityKey, text: string | undefined): { key: string } | { reason: string } {
  if (text === undefined || text === '') return { key: 'createdAt' };
  const keys = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (keys.length > 8) return { reason: 'Query.TooManySortKeys' };
  const out: string[] = [];
  const seen = new Set<string>();
  for (const k of keys) {
    const desc = k.startsWith('-');
    const field = desc || k.startsWith('+') ? k.slice(1) : k;
    if (!isQueryable(e, field)) return { reason: 'Query.UnknownSortField' };
    const type = QUERYABLE[e][field];
    if (type === 'JSON') return { reason: 'Query.UnsortableField' };
    if (seen.has(field)) continue;
    seen.add(field);
    if (field !== 'id') out.push((desc ? '-' : '') + field);
  }
  return { key: out.join(',') };
}

export function csvReasons(kind: 'fields' | 'include', e: EntityKey, text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (kind === 'fields') return names.every((n) => n === 'concurrencyToken' || isQueryable(e, n)) ? [] : ['Query.UnknownField'];
  const unique = [...new Set(names)];
  if (unique.length > 10) return ['Query.TooManyIncludes'];
  return unique.every((n) => RELATIONS[e].includes(n)) ? [] : ['Query.UnknownRelation'];
}

// ---------------------------------------------------------------- paths and headers

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is sent
 * as the UTF-8 bytes a lax encoder would write (`%ED%A0%80`): the server's
 * decoding refuses those, so the path names no route.
 */
export const encodePathSegment = (s: string): string =>
  s.replace(/\p{Cs}|[^\p{Cs}]+/gu, (part) => {
    const cp = part.charCodeAt(0);
    if (part.length > 1 || cp < 0xd800 || cp > 0xdfff) return encodeURIComponent(part);
    return `%${(0xe0 | (cp >> 12)).toString(16).toUpperCase()}%${(0x80 | ((cp >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (cp & 0x3f)).toString(16).toUpperCase()}`;
  });

const segment = fc.oneof(
  c('customers', 'orders', 'Customer', 'customer', 'CUSTOMERS', 'count', 'batch', 'delete', 'TenantRecord', 'ProjectRecord', 'projects', 'Schema', 'entities',
    'health', 'identity', 'events', '%00', '%ZZ', '%2F', '%25', '%C0%AF', '%27%3B%20DROP%20TABLE%20x%3B--', "customers'", 'customers%00', '%E2%80%AE', '~', '*', 'null',
    'undefined', '__proto__', 'constructor'),
  fc.uuid(),
  fuzzString({ maxLength: 12 }).map(encodePathSegment),
  fc.stringMatching(/^[a-z]{1,10}$/),
);
export interface PathCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body: string | undefined;
}
export const pathCaseArb: fc.Arbitrary<PathCase> = fc.record({
  method: c('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
  path: fc.record({ base: c('/api/', '/v1/', '/API/', '/api//', '/', '/apix/'), segs: fc.array(segment, { maxLength: 5 }) }).map(({ base, segs }) => base + segs.join('/')),
  body: opt(c('{}', '{"email":"x"}', 'null', '[]', '{"relatedId":"nope"}', '{"ids":["x"]}')),
});

/** Header values a client can send: visible ASCII, spaces and tabs. */
export const headerText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'\t !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~'.split('')), maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 300 }),
  sqlish.filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
);

export type HeaderCase =
  | { kind: 'if-match'; value: string; real: 'no' | 'bare' | 'quoted' | 'weak' }
  | { kind: 'idempotency-key'; value: string; replay: boolean }
  | { kind: 'x-service-tenant' | 'x-service-project'; value: string; real: 'no' | 'slug' | 'id' | 'ID' }
  | { kind: 'content-type'; value: string }
  | { kind: 'x-service-correlation-id'; value: string }
  | { kind: 'authorization'; value: string }
  /** A header value with U+0000 in it (sent on a raw socket: fetch refuses it). */
  | { kind: 'control'; header: string; value: string };

export const headerCaseArb: fc.Arbitrary<HeaderCase> = fc.oneof(
  fc.record({ kind: fc.constant('if-match' as const), value: fc.oneof(headerText, c('*', ' * ', '"*"', 'W/"*"', '', 'W/', '""', '"', ',')), real: c('no' as const, 'no' as const, 'bare' as const, 'quoted' as const, 'weak' as const) }),
  fc.record({ kind: fc.constant('idempotency-key' as const), value: fc.oneof(headerText, c('a', 'key-1', 'x'.repeat(255), 'x'.repeat(256), ' ', 'a b', '\tk\t')), replay: fc.boolean() }),
  fc.record({ kind: c('x-service-tenant' as const, 'x-service-project' as const), value: headerText, real: c('no' as const, 'no' as const, 'slug' as const, 'id' as const, 'ID' as const) }),
  fc.record({ kind: fc.constant('content-type' as const), value: fc.oneof(headerText, c('application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/vnd.api+json', 'application/merge-patch+json', 'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'json', '', 'application/', '+json', 'application/+json', ' application/json ; x=y')) }),
  fc.record({ kind: fc.constant('x-service-correlation-id' as const), value: fc.oneof(headerText, c('abcdefgh', 'abcdefg', 'a'.repeat(128), 'a'.repeat(129), 'has space x', 'ok.id:with-chars_1')) }),
  fc.record({ kind: fc.constant('authorization' as const), value: fc.oneof(headerText.map((s) => `Bearer ${s}`), headerText, c('Bearer', 'Basic YWRtaW46YWRtaW4=', 'Bearer ' + 'x'.repeat(5000))) }),
  // Only NUL: a lone surrogate has no byte form in a header (its UTF-8 bytes are not ASCII, which uWS does not decode).
  fc.record({
    kind: fc.constant('control' as const),
    header: c('x-service-branch', 'x-service-tenant', 'x-service-project', 'idempotency-key', 'if-match', 'authorization', 'content-type'),
    value: fc.tuple(headerText, fc.nat()).map(([v, at]) => `${v.slice(0, at % (v.length + 1))}\u0000${v.slice(at % (v.length + 1))}`),
  }),
);

/** What a field-value parser keeps of a header value: leading and trailing spaces and tabs go. */
export const httpTrim = (s: string): string => s.replace(/^[\t ]+|[\t ]+$/g, '');

// ---------------------------------------------------------------- forged cursors

/** Customer sort keys with the cursor value type each carries (and whether null is a legal value). */
export const CURSOR_KEYS: Record<string, { type: string; nullable: boolean }> = {
  email: { type: 'String', nullable: false }, tier: { type: 'Enum', nullable: false }, age: { type: 'Int', nullable: true },
  balance: { type: 'Decimal', nullable: true }, since: { type: 'DateTime', nullable: true }, vip: { type: 'Boolean', nullable: false },
  createdAt: { type: 'DateTime', nullable: false }, updatedAt: { type: 'DateTime', nullable: false },
};
/** Values wrong for a key of each type by construction (the id tie-breaker is `uuid`). */
const CURSOR_BAD: Record<string, unknown[]> = {
  String: [true, false, 1e308, -1, 0, {}, [], 'nul\u0000', 'lone\ud800'],
  Enum: [true, 1e308, 'gold', '', 'FREE', {}],
  Int: [true, false, 1.5, 1e308, -1e308, 2147483648, '1', '', {}],
  Decimal: [true, false, 'abc', '', '1e5', 'NaN', '1.2.3', {}, []],
  DateTime: [true, false, 1e308, 0, '', 'yesterday', '2023-02-30T00:00:00Z', '2023-01-01T00:00:00+20:00', '10000-01-01T00:00:00Z', '2023-01-01', {}],
  Boolean: [1, 0, 'true', '', 1e308, {}],
  uuid: [true, false, 1e308, null, '', 'not-a-uuid', '00000000-0000-4000-8000-00000000000g', {}, []],
};

/**
 * One forged cursor: a real cursor of `sort` with the value at `at` (0: the
 * sort key, 1: the id) replaced, or its page number replaced. `bad` says the
 * value is wrong for its key by construction (422 Query.InvalidCursor);
 * otherwise it is random JSON that may fit (200) or not (the same 422).
 */
export interface ForgedCursorCase {
  sort: string;
  at: 0 | 1 | 'page';
  value: unknown;
  bad: boolean;
}

export const forgedCursorArb: fc.Arbitrary<ForgedCursorCase> = fc
  .record({ key: c(...Object.keys(CURSOR_KEYS)), desc: fc.boolean(), at: c<0 | 1 | 'page'>(0, 0, 1, 'page'), pick: fc.nat(), random: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.uuid(), isoArb), kind: c('bad', 'bad', 'random') })
  .map(({ key, desc, at, pick, random, kind }): ForgedCursorCase => {
    const sort = `${desc ? '-' : ''}${key}`;
    if (at === 'page') {
      const pages: unknown[] = [0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER, '2', null, true, {}];
      return { sort, at, value: pages[pick % pages.length], bad: true };
    }
    const k = CURSOR_KEYS[key]!;
    const list = [...CURSOR_BAD[at === 1 ? 'uuid' : k.type]!, ...(at === 0 && !k.nullable ? [null] : [])];
    return kind === 'bad' ? { sort, at, value: list[pick % list.length], bad: true } : { sort, at, value: random, bad: false };
  });

// ---------------------------------------------------------------- filters into an entity the caller cannot read

const COMPARISON = ['eq', 'ne', 'gt', 'lt', 'in', 'between', 'like', 'isNull'];

/**
 * An order filter that enters Customer through the `customer` reference, at
 * the top, under `and`/`or` after a valid sibling, or under `not`; the
 * nested part is any customer filter case (valid or not).
 */
export interface RelatedFilterCase {
  text: string;
  /** True when the filter enters Customer (the caller gets 403 for lack of entity:Customer:read). */
  reaches: boolean;
  /** Otherwise the outcome of the nested part alone: 200 or a Filter reason. */
  inner: FilterCase;
  /** The nested part holds U+0000 or a lone surrogate: 422 Request.* before any grant is checked. */
  unstorable: boolean;
}

export const relatedFilterArb: fc.Arbitrary<RelatedFilterCase> = fc
  .record({ inner: filterCaseArb.filter((f) => f.entity === 'customers'), wrap: c('top', 'and', 'or', 'not') })
  .map(({ inner, wrap }): RelatedFilterCase => {
    const node = `{"customer":${inner.text}}`;
    const text = wrap === 'top' ? node : wrap === 'not' ? `{"not":${node}}` : `{"${wrap}":[{"total":{"gt":"0"}},${node}]}`;
    let v: unknown;
    try {
      v = JSON.parse(inner.text);
    } catch {
      return { text, reaches: false, inner, unstorable: inner.text.includes('\u0000') };
    }
    if (holdsUnstorable(v)) return { text, reaches: false, inner, unstorable: true };
    // The parser enters Customer when the nested object names fields, not comparison operators.
    const reaches = Buffer.byteLength(text) <= 16 * 1024 && isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => !COMPARISON.includes(k));
    return { text, reaches, inner, unstorable: false };
  });
