/** The fixed windows usage is rolled up in and quotas count in (UTC). */
export const USAGE_WINDOWS = ['hour', 'day', 'calendar-month'] as const;
export type UsageWindow = (typeof USAGE_WINDOWS)[number];

export const isUsageWindow = (w: string): w is UsageWindow => (USAGE_WINDOWS as readonly string[]).includes(w);

/** The `date_trunc` unit of each window. */
export const TRUNC_UNIT: Readonly<Record<UsageWindow, string>> = { hour: 'hour', day: 'day', 'calendar-month': 'month' };

/** Start of the window containing `now` (UTC). */
export function windowStart(window: UsageWindow, now: Date = new Date()): Date {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  switch (window) {
    case 'hour': return new Date(Date.UTC(y, m, d, now.getUTCHours()));
    case 'day': return new Date(Date.UTC(y, m, d));
    case 'calendar-month': return new Date(Date.UTC(y, m, 1));
  }
}

/** Start of the next window after the one containing `now` (a quota's `X-Service-Quota-Reset`). */
export function nextWindowStart(window: UsageWindow, now: Date = new Date()): Date {
  const s = windowStart(window, now);
  switch (window) {
    case 'hour': return new Date(s.getTime() + 3_600_000);
    case 'day': return new Date(s.getTime() + 86_400_000);
    case 'calendar-month': return new Date(Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + 1, 1));
  }
}
