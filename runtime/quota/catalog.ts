/**
 * The quota catalog (CONTRACT: Usage and quotas): kinds, modes and windows a
 * quota may name. Windows are UTC; a window is cut into buckets so a
 * counter can roll over (calendar windows: one bucket, the window itself;
 * rolling windows: minute or hour buckets, docs/usage.md "Quotas").
 */
export const QUOTA_KINDS = ['read.monthly', 'write.monthly', 'realtime.subscriptions', 'webhook.deliveries.monthly', 'authored.invocations.monthly', 'authored.cpu_ms.monthly', 'task.runs.monthly'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

/**
 * The usage event kind a quota kind counts, where they differ. The first kinds were named
 * alike (`read.monthly` is both); CONTRACT names later usage without the window
 * (`authored.invocations`, counted by the quota kind `authored.invocations.monthly`), so a
 * counter loading its window's usage asks the ledger for the usage kind.
 */
const USAGE_KIND_OF: Readonly<Record<string, string>> = {
  'authored.invocations.monthly': 'authored.invocations',
  'authored.cpu_ms.monthly': 'authored.cpu_ms',
  'task.runs.monthly': 'task.runs',
};
export const usageKindOf = (quotaKind: string): string => USAGE_KIND_OF[quotaKind] ?? quotaKind;
/**
 * Kinds counted over a window by the ledger's counters: reads and writes in dispatch's quota stage,
 * webhook delivery attempts in the outbound dispatcher (`QuotaLedger.admitWork`).
 */
export const ENFORCED_KINDS: ReadonlySet<string> = new Set(['read.monthly', 'write.monthly', 'webhook.deliveries.monthly', 'authored.invocations.monthly', 'authored.cpu_ms.monthly', 'task.runs.monthly']);

/**
 * Kinds that bound what is open at once rather than what was consumed in a window: a
 * `realtime.subscriptions` quota caps the project's open subscriptions, enforced by the realtime
 * hub's slot accounting (runtime/realtime/subscription-limits.ts), cluster-wide. Its window is
 * stored but means nothing, and it takes no dimensions.
 */
export const CONCURRENT_KINDS: ReadonlySet<string> = new Set(['realtime.subscriptions']);

export const QUOTA_MODES = ['hard', 'soft', 'monitor', 'reservation'] as const;
export type QuotaMode = (typeof QUOTA_MODES)[number];

/** Every kind defaults to the calendar month (the `.monthly` kinds by CONTRACT, the others by our choice). */
export const DEFAULT_WINDOW = 'calendar-month';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const ROLLING = /^rolling-([1-9][0-9]{0,3})(m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { m: MINUTE, h: HOUR, d: DAY };
/** Longest rolling window: a year; beyond it the bucket history would grow without purpose. */
const MAX_ROLLING_MS = 366 * DAY;

export interface QuotaWindow {
  readonly name: string;
  /** Start of the bucket holding instant t (ms). */
  bucketStart(t: number): number;
  /** Earliest bucket start still counted at `now`: usage in buckets from here on is "used". */
  liveFrom(now: number): number;
  /** When the usage counted at `now` starts to fall out (`X-Service-Quota-Reset`). */
  reset(now: number): number;
}

function calendar(name: string, start: (d: Date) => number, next: (start: number) => number): QuotaWindow {
  return {
    name,
    bucketStart: (t) => start(new Date(t)),
    liveFrom: (now) => start(new Date(now)),
    reset: (now) => next(start(new Date(now))),
  };
}

const CALENDAR: Readonly<Record<string, QuotaWindow>> = {
  'calendar-month': calendar(
    'calendar-month',
    (d) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    (s) => { const d = new Date(s); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1); },
  ),
  day: calendar('day', (d) => Math.floor(d.getTime() / DAY) * DAY, (s) => s + DAY),
  hour: calendar('hour', (d) => Math.floor(d.getTime() / HOUR) * HOUR, (s) => s + HOUR),
};

/**
 * `rolling-<n><m|h|d>`: the last n minutes, hours or days. Buckets are one
 * minute for spans up to a day and one hour above. The bucket that holds
 * `now - span` still counts whole, so no span-long stretch can ever hold
 * more than the limit (a window may count up to one bucket more than its
 * span, never less).
 */
function rolling(name: string, spanMs: number): QuotaWindow {
  const bucket = spanMs <= DAY ? MINUTE : HOUR;
  const bucketStart = (t: number): number => Math.floor(t / bucket) * bucket;
  return {
    name,
    bucketStart,
    liveFrom: (now) => bucketStart(now - spanMs),
    reset: (now) => bucketStart(now - spanMs) + bucket + spanMs,
  };
}

const parsed = new Map<string, QuotaWindow>();

/** The window named, or null when the name is not one (422 `window`). */
export function parseWindow(name: string): QuotaWindow | null {
  const known = CALENDAR[name] ?? parsed.get(name);
  if (known !== undefined) return known;
  const m = ROLLING.exec(name);
  if (m === null) return null;
  const span = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (span > MAX_ROLLING_MS) return null;
  const w = rolling(name, span);
  parsed.set(name, w);
  return w;
}

/** `read.monthly` → `Quota.ReadMonthly.Exhausted` (CONTRACT's reason codes); `authored.cpu_ms.monthly` → `Quota.AuthoredCpuMsMonthly.Exhausted`. */
export function exhaustedReason(kind: string): string {
  const pascal = kind.split(/[._]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');
  return `Quota.${pascal}.Exhausted`;
}
