import { validationFailed } from '../errors/service-error.js';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { FieldDef } from '../publication/model.js';
import { snakeCase } from './names.js';

/** A decoded protobuf message as protobufjs gives it: fields present on the wire are own properties. */
export type Message = Record<string, unknown>;

/** Deepest JSON value (google.protobuf.Value) taken from or given to a client. */
const MAX_VALUE_DEPTH = 64;

export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** `2026-11-22T05:56:51.123456Z` (the form both backends return) → Timestamp, keeping the microseconds. */
export function timestampOfIso(iso: string): Timestamp {
  const dot = iso.indexOf('.', 19);
  const ms = Date.parse(`${iso.slice(0, 19)}Z`);
  const fraction = dot === -1 ? '' : iso.slice(dot + 1, iso.length - 1);
  return { seconds: Math.floor(ms / 1000), nanos: Number(fraction.padEnd(9, '0').slice(0, 9)) || 0 };
}

const toNumber = (v: unknown): number => (typeof v === 'object' && v !== null ? Number(String(v)) : Number(v ?? 0));

/** Timestamp → ISO 8601 UTC with microseconds (REST's precision); null when it is no valid instant. */
export function isoOfTimestamp(t: Message): string | null {
  const seconds = toNumber(t.seconds);
  const nanos = toNumber(t.nanos);
  if (!Number.isSafeInteger(seconds) || !Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) return null;
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) return null;
  const whole = d.toISOString();
  if (whole.length !== 24) return null; // years past 9999 or before 0
  return `${whole.slice(0, 19)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/** A JSON value → google.protobuf.Value (protobufjs's field names). */
export function valueOfJson(v: unknown, depth = 0): Message {
  if (depth > MAX_VALUE_DEPTH) return { nullValue: 0 };
  if (v === null || v === undefined) return { nullValue: 0 };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map((x) => valueOfJson(x, depth + 1)) } };
  const fields: Record<string, Message> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) fields[k] = valueOfJson(x, depth + 1);
  return { structValue: { fields } };
}

/** google.protobuf.Value → JSON; undefined when nested too deep. */
export function jsonOfValue(m: Message, depth = 0): unknown {
  if (depth > MAX_VALUE_DEPTH) return undefined;
  if (Object.prototype.hasOwnProperty.call(m, 'numberValue')) return m.numberValue;
  if (Object.prototype.hasOwnProperty.call(m, 'stringValue')) return m.stringValue;
  if (Object.prototype.hasOwnProperty.call(m, 'boolValue')) return m.boolValue;
  if (Object.prototype.hasOwnProperty.call(m, 'listValue')) {
    const values = ((m.listValue as Message | null)?.values ?? []) as Message[];
    const out = values.map((x) => jsonOfValue(x, depth + 1));
    return out.includes(undefined) ? undefined : out;
  }
  if (Object.prototype.hasOwnProperty.call(m, 'structValue')) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(((m.structValue as Message | null)?.fields ?? {}) as Record<string, Message>)) {
      const j = jsonOfValue(x, depth + 1);
      if (j === undefined) return undefined;
      out[k] = j;
    }
    return out;
  }
  return null;
}

/** One user field's mapping between the REST row and the messages. */
interface FieldMap {
  rest: string;
  proto: string;
  def: FieldDef;
}

const mapsOf = new WeakMap<CompiledEntity, FieldMap[]>();

/** The entity's user fields with their proto names, built once per compiled entity. */
export function fieldMapsOf(entity: CompiledEntity): FieldMap[] {
  let maps = mapsOf.get(entity);
  if (maps === undefined) {
    maps = entity.userFields.map((def) => ({ rest: def.name, proto: snakeCase(def.name), def }));
    mapsOf.set(entity, maps);
  }
  return maps;
}

function protoValueOf(def: FieldDef, v: unknown): unknown {
  switch (def.type) {
    case 'DateTime':
    case 'Instant':
      return typeof v === 'string' ? timestampOfIso(v) : undefined;
    case 'JSON':
      return valueOfJson(v);
    case 'Int':
      return typeof v === 'number' ? v : Number(v);
    case 'Boolean':
      return v === true;
    default:
      return String(v);
  }
}

/** A REST row → the entity message (snake case; absent when null or masked). */
export function messageOfRow(entity: CompiledEntity, row: Record<string, unknown>): Message {
  const out: Message = { id: row.id };
  for (const m of fieldMapsOf(entity)) {
    const v = row[m.rest];
    if (v === null || v === undefined) continue;
    out[m.proto] = protoValueOf(m.def, v);
  }
  if (typeof row.createdAt === 'string') out.created_at = timestampOfIso(row.createdAt);
  if (typeof row.updatedAt === 'string') out.updated_at = timestampOfIso(row.updatedAt);
  if (row.concurrencyToken !== undefined && row.concurrencyToken !== null) out.concurrency_token = String(row.concurrencyToken);
  return out;
}

const has = (m: Message, key: string): boolean => Object.prototype.hasOwnProperty.call(m, key) && m[key] !== undefined;

/** One input field's message value → its REST value; a value REST would refuse as malformed is refused here the same way. */
function restValueOf(entity: CompiledEntity, m: FieldMap, v: unknown): unknown {
  if (m.def.type === 'DateTime' || m.def.type === 'Instant') {
    const iso = typeof v === 'object' && v !== null ? isoOfTimestamp(v as Message) : null;
    if (iso === null) throw validationFailed(`${entity.entityName}Validation.InvalidValue`, `'${m.rest}' must be a valid timestamp`, m.rest);
    return iso;
  }
  if (m.def.type === 'JSON') {
    const j = jsonOfValue(v as Message);
    if (j === undefined) throw validationFailed(`${entity.entityName}Validation.InvalidValue`, `'${m.rest}' is nested too deeply`, m.rest);
    return j;
  }
  return v;
}

/**
 * An input message → the REST body (field names as REST spells them).
 * `clear`: fields an update mask lists but the message leaves unset; they
 * become null (CONTRACT: gRPC Update).
 */
export function bodyOfInput(entity: CompiledEntity, input: Message | null | undefined, clear: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const m of fieldMapsOf(entity)) {
    if (input != null && has(input, m.proto)) body[m.rest] = restValueOf(entity, m, input[m.proto]);
    else if (clear.has(m.rest)) body[m.rest] = null;
  }
  return body;
}
