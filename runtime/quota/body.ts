import { validationFailed } from '../errors/service-error.js';
import { CONCURRENT_KINDS, DEFAULT_WINDOW, parseWindow, type QuotaMode } from './catalog.js';

/** What a quota write sets (validated): the fields of POST/PUT, or the result of a PATCH merged onto the stored quota. */
export interface QuotaFields {
  kind: string;
  limit: number;
  mode: QuotaMode;
  window: string;
  dimensions: Record<string, string>;
}

/**
 * A quota body as its contract admits it (runtime/operations/usage/usage-schemas.ts
 * `UsageQuotaInput`, `UsageQuotaPatch`): types, kinds, modes, the window's shape and
 * the number of dimensions are checked before the operation runs. What is left
 * here is what the schema does not say: a rolling window's span, the dimensions'
 * keys and values, and that a concurrency kind takes no dimensions.
 */
interface QuotaBody {
  kind?: string | null;
  limit?: number | null;
  mode?: QuotaMode | null;
  window?: string | null;
  dimensions?: Record<string, unknown> | null;
}

const MAX_DIMENSION_CHARS = 128;

function windowOf(v: string): string {
  // The pattern admits any `rolling-<n><unit>` up to 9999 units; the span bound (a year) is parseWindow's.
  if (parseWindow(v) === null) throw validationFailed('Quota.UnknownWindow', 'window must be calendar-month, day, hour or rolling-<n><m|h|d> (at most a year)', 'window');
  return v;
}

function dimensionsOf(v: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string' || k === '' || k.length > MAX_DIMENSION_CHARS || val.length > MAX_DIMENSION_CHARS) {
      throw validationFailed('Quota.InvalidDimensions', 'dimensions must be an object of at most 8 string keys to string values', 'dimensions');
    }
    out[k] = val;
  }
  return out;
}

const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** POST and PUT: `{ kind, limit, mode, window?, dimensions? }`, the window defaulting to the calendar month. */
export function parseQuotaBody(body: unknown): QuotaFields {
  const b = body as QuotaBody;
  return concurrencyChecked({
    kind: b.kind!,
    limit: b.limit!,
    mode: b.mode!,
    window: given(b.window) ? windowOf(b.window) : DEFAULT_WINDOW,
    dimensions: given(b.dimensions) ? dimensionsOf(b.dimensions) : {},
  });
}

/** PATCH: only the fields present change. */
export function mergeQuotaPatch(current: QuotaFields, body: unknown): QuotaFields {
  const b = body as QuotaBody;
  return concurrencyChecked({
    kind: given(b.kind) ? b.kind : current.kind,
    limit: given(b.limit) ? b.limit : current.limit,
    mode: given(b.mode) ? b.mode : current.mode,
    window: given(b.window) ? windowOf(b.window) : current.window,
    dimensions: given(b.dimensions) ? dimensionsOf(b.dimensions) : current.dimensions,
  });
}

/** A concurrency kind bounds a project's open subscriptions as a whole: no dimensions narrow it. */
function concurrencyChecked(f: QuotaFields): QuotaFields {
  if (CONCURRENT_KINDS.has(f.kind) && Object.keys(f.dimensions).length > 0) {
    throw validationFailed('Quota.InvalidDimensions', `${f.kind} bounds the project's open subscriptions as a whole and takes no dimensions`, 'dimensions');
  }
  return f;
}
