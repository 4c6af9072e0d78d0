import { validationFailed } from '../errors/service-error.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An ISO timestamp PostgreSQL accepts as timestamptz: a real calendar day
 * (Date.parse rolls 02-30 over; the database refuses it), years 0001-9999,
 * offsets within ±15:59. Anything else would fail in SQL as a 500.
 */
export function isStorableTimestamp(v: string): boolean {
  if (!ISO.test(v) || !Number.isFinite(Date.parse(v))) return false;
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d);
  if (y < 1 || day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return false;
  return v.endsWith('Z') || Number(v.slice(-5, -3)) <= 15;
}

const MAX_TEXT = 4096;
const MAX_VALUE = 512;

/**
 * Parses a flat filter JSON (`{ "<key>": "<string>", … }`) as the event
 * and audit logs take it: known keys only, non-empty strings, `since` and
 * `until` real timestamps the database accepts. `what` names the log in
 * error messages.
 */
export function parseFlatFilter(text: string | undefined, keys: readonly string[], what: string): Record<string, string> {
  if (text === undefined || text === '') return {};
  if (text.length > MAX_TEXT) throw validationFailed('Filter.TooLarge', 'filter too long', 'filter');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw validationFailed('Filter.MalformedJson', 'filter is not valid JSON', 'filter');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw validationFailed('Filter.InvalidFilter', 'filter must be a JSON object', 'filter');
  for (const [k, v] of Object.entries(raw)) {
    if (!keys.includes(k)) throw validationFailed('Filter.UnknownField', `unknown ${what} filter key '${k}'`, `filter.${k}`);
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_VALUE || v.includes('\u0000')) throw validationFailed('Filter.InvalidValue', `'${k}' must be a non-empty string`, `filter.${k}`);
    if ((k === 'since' || k === 'until') && !isStorableTimestamp(v)) throw validationFailed('Filter.InvalidValue', `'${k}' must be an ISO 8601 timestamp`, `filter.${k}`);
  }
  return raw as Record<string, string>;
}
