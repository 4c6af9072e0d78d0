import type { FieldDef } from '../publication/model.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^[+-]?(\d{1,131072})(\.\d{1,16383})?$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
/** Longest String/ID we take; the 10 MiB body limit bounds the rest. */
const MAX_ID_LENGTH = 255;
/** An unpaired UTF-16 surrogate: not text; the driver would store it as U+FFFD. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Earliest instant we take: 0001-01-01T00:00:00Z (Date.UTC maps years 0-99 to 1900-1999). */
const MIN_INSTANT = Date.parse('0001-01-01T00:00:00Z');

export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

/**
 * Checks one value against a field's type. Returns null when valid, else a
 * human-readable reason. Never throws: every bad input is a 422, not a 500.
 */
export function checkFieldValue(field: Pick<FieldDef, 'type' | 'values' | 'references'>, value: unknown): string | null {
  switch (field.type) {
    case 'ID':
      if (field.references !== null) return isUuid(value) ? null : 'must be the UUID of the related row';
      return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH && !value.includes('\u0000') && !LONE_SURROGATE.test(value) ? null : `must be a non-empty string of at most ${MAX_ID_LENGTH} characters`;
    case 'String':
      return typeof value === 'string' && !value.includes('\u0000') && !LONE_SURROGATE.test(value) ? null : 'must be a string';
    case 'Int':
      return typeof value === 'number' && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX ? null : 'must be a 32-bit integer';
    case 'Decimal':
      // Strings keep precision; finite numbers are accepted for convenience.
      if (typeof value === 'number') return Number.isFinite(value) ? null : 'must be a finite decimal';
      return typeof value === 'string' && DECIMAL.test(value) ? null : 'must be a decimal string such as "12.50"';
    case 'DateTime':
    case 'Instant': {
      if (typeof value !== 'string' || !ISO_DATETIME.test(value)) return 'must be an ISO 8601 timestamp with a time zone';
      // PostgreSQL refuses UTC offsets of 16 hours or more (JavaScript takes up to 23:59).
      if (/[+-]\d{2}:\d{2}$/.test(value) && Number(value.slice(-5, -3)) > 15) return 'must have a UTC offset between -15:59 and +15:59';
      const t = Date.parse(value);
      return Number.isFinite(t) && t >= MIN_INSTANT && t < Date.UTC(10000, 0, 1) ? null : 'must be a valid timestamp';
    }
    case 'Boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'Enum':
      return typeof value === 'string' && field.values.includes(value) ? null : `must be one of ${field.values.join(', ')}`;
    case 'JSON':
      return value === undefined || hasNulChar(value) ? 'must be JSON without NUL characters' : null;
  }
}

/** jsonb rejects \u0000 in strings; check before the database does. */
function hasNulChar(value: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some((v) => hasNulChar(v, depth + 1));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNulChar(v, depth + 1));
  }
  return false;
}

/** Value as a SQL parameter for the field's column type. */
export function toSqlParam(field: Pick<FieldDef, 'type'>, value: unknown): unknown {
  if (value === null) return null;
  switch (field.type) {
    case 'Decimal':
      return typeof value === 'number' ? String(value) : value;
    case 'JSON':
      return JSON.stringify(value);
    default:
      return value;
  }
}
