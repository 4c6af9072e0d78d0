import { Cron } from 'croner';
import type { TriggerSpec } from './types.js';

/**
 * When a time trigger fires next (CONTRACT "Scheduling", Triggers).
 *
 * Cron expressions are croner's (5 fields, or 6 with seconds first; IANA time
 * zones). Croner follows Vixie cron across DST: a fixed-time job in a skipped
 * hour runs after the gap, and an interval job runs on both passes of a
 * repeated hour. CONTRACT says otherwise, on both counts: a local time
 * skipped by DST does not fire, a repeated one fires once. So each time croner
 * proposes is kept only when (1) its local wall-clock time matches the
 * pattern (a time moved past the gap does not) and (2) its local wall-clock
 * time is later than that of the fire before it (the second pass of a
 * repeated hour is not).
 */

const MAX_PROPOSALS = 1_000;

/** A pattern and zone croner accepts, else the reason it does not (the trigger route's 422). */
export function cronProblem(cron: string, timezone: string): string | null {
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return 'a cron expression has 5 fields, or 6 with seconds first';
  if (!validTimeZone(timezone)) return `unknown time zone '${timezone}'`;
  try {
    new Cron(cron, { timezone, paused: true }).stop();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();
/** `YYYY-MM-DD HH:MM:SS` in `zone`: comparable as a string. */
function wallClock(at: Date, zone: string): string {
  let f = wallClocks.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('sv-SE', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    wallClocks.set(zone, f);
  }
  return f.format(at);
}

const crons = new Map<string, Cron>();
function cronOf(cron: string, timezone: string): Cron {
  const key = `${timezone} ${cron}`;
  let c = crons.get(key);
  if (c === undefined) {
    c = new Cron(cron, { timezone, paused: true });
    if (crons.size > 10_000) crons.clear();
    crons.set(key, c);
  }
  return c;
}

/** The first fire of a cron trigger strictly after `after` (the last fire, or now), or null when there is none. */
export function nextCronFire(cron: string, timezone: string, after: Date): Date | null {
  const c = cronOf(cron, timezone);
  const lastWall = wallClock(after, timezone);
  let from = after;
  for (let i = 0; i < MAX_PROPOSALS; i++) {
    const next = c.nextRun(from);
    if (next === null) return null;
    const wall = wallClock(next, timezone);
    if (c.match(next) && wall > lastWall) return next;
    from = next;
  }
  return null;
}

/**
 * The first fire of a time trigger strictly after `after`; null when it fires no
 * more (a `once` trigger past its time, a cron with no future match).
 */
export function nextFire(spec: TriggerSpec, after: Date): Date | null {
  switch (spec.kind) {
    case 'cron':
      return nextCronFire(spec.cron, spec.timezone, after);
    case 'interval':
      return new Date(after.getTime() + spec.intervalSeconds * 1_000);
    case 'once': {
      const at = new Date(spec.at);
      return at.getTime() > after.getTime() ? at : null;
    }
    default:
      return null;
  }
}
