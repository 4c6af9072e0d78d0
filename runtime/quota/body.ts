import { validationFailed } from '../errors/service-error.js';
import { CONCURRENT_KINDS, DEFAULT_WINDOW, parseWindow, QUOTA_KINDS, QUOTA_MODES, type QuotaMode } from './catalog.js';

/** What a quota write sets (validated): the fields of POST/PUT, or the result of a PATCH merged onto the stored quota. */
export interface QuotaFields {
  kind: string;
  limit: number;
  mode: QuotaMode;
  window: string;
  dimensions: Record<string, string>;
}

const MAX_DIMENSIONS = 8;
const MAX_DIMENSION_CHARS = 128;
const KINDS: ReadonlySet<string> = new Set(QUOTA_KINDS);
const MODES: ReadonlySet<string> = new Set(QUOTA_MODES);

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationFailed('Quota.InvalidBody', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function kindOf(v: unknown): string {
  if (typeof v !== 'string' || !KINDS.has(v)) throw validationFailed('Quota.UnknownKind', `kind must be one of ${QUOTA_KINDS.join(', ')}`, 'kind');
  return v;
}

function limitOf(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw validationFailed('Quota.InvalidLimit', 'limit must be a non-negative integer', 'limit');
  return v;
}

function modeOf(v: unknown): QuotaMode {
  if (typeof v !== 'string' || !MODES.has(v)) throw validationFailed('Quota.UnknownMode', `mode must be one of ${QUOTA_MODES.join(', ')}`, 'mode');
  return v as QuotaMode;
}

function windowOf(v: unknown): string {
  if (typeof v !== 'string' || parseWindow(v) === null) {
    throw validationFailed('Quota.UnknownWindow', 'window must be calendar-month, day, hour or rolling-<n><m|h|d> (at most a year)', 'window');
  }
  return v;
}

function dimensionsOf(v: unknown): Record<string, string> {
  const bad = () => validationFailed('Quota.InvalidDimensions', `dimensions must be an object of at most ${MAX_DIMENSIONS} string keys to string values`, 'dimensions');
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad();
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_DIMENSIONS) throw bad();
  const out: Record<string, string> = {};
  for (const [k, val] of entries) {
    if (typeof val !== 'string' || k === '' || k.length > MAX_DIMENSION_CHARS || val.length > MAX_DIMENSION_CHARS) throw bad();
    out[k] = val;
  }
  return out;
}

const present = (b: Record<string, unknown>, k: string): boolean => b[k] !== undefined && b[k] !== null;

/** POST and PUT: `{ kind, limit, mode, window?, dimensions? }`, the window defaulting to the calendar month. */
export function parseQuotaBody(body: unknown): QuotaFields {
  const b = objectBody(body);
  return concurrencyChecked({
    kind: kindOf(b.kind),
    limit: limitOf(b.limit),
    mode: modeOf(b.mode),
    window: present(b, 'window') ? windowOf(b.window) : DEFAULT_WINDOW,
    dimensions: present(b, 'dimensions') ? dimensionsOf(b.dimensions) : {},
  });
}

/** PATCH: only the fields present change; each is checked as in POST. */
export function mergeQuotaPatch(current: QuotaFields, body: unknown): QuotaFields {
  const b = objectBody(body);
  return concurrencyChecked({
    kind: present(b, 'kind') ? kindOf(b.kind) : current.kind,
    limit: present(b, 'limit') ? limitOf(b.limit) : current.limit,
    mode: present(b, 'mode') ? modeOf(b.mode) : current.mode,
    window: present(b, 'window') ? windowOf(b.window) : current.window,
    dimensions: present(b, 'dimensions') ? dimensionsOf(b.dimensions) : current.dimensions,
  });
}

/** A concurrency kind bounds a project's open subscriptions as a whole: no dimensions narrow it. */
function concurrencyChecked(f: QuotaFields): QuotaFields {
  if (CONCURRENT_KINDS.has(f.kind) && Object.keys(f.dimensions).length > 0) {
    throw validationFailed('Quota.InvalidDimensions', `${f.kind} bounds the project's open subscriptions as a whole and takes no dimensions`, 'dimensions');
  }
  return f;
}
