import { nextFire } from './next-fire.js';
import type { MisfirePolicy, TriggerSpec } from './types.js';

/**
 * A fire handled later than this after its time is a misfire (CONTRACT "Scheduling":
 * after downtime or pause, `misfire` decides). Two seconds covers a scan period and a
 * busy node; a scanner that merely ran late within it fires normally.
 */
export const MISFIRE_GRACE_MS = 2_000;

/** Fire times a scan walks for one trigger at most: a cron trigger that missed more is a misfire anyway. */
const MAX_DUE_FIRES = 10_000;

/**
 * What a scan does with a due time trigger:
 * - `fire`: one fire on time (scheduledFor `at`), next after it;
 * - `collapse` (misfire `fireOnce`): one run for the latest missed time `at`, next after now;
 * - `skip` (misfire `skip`): no run, next after now.
 * `next` is null when the trigger fires no more (a spent `once`).
 */
export interface FireDecision {
  action: 'fire' | 'collapse' | 'skip';
  at: Date;
  next: Date | null;
}

/** The latest fire time at or before `now`, starting from the due `first`, and whether more than one was due. */
function latestDue(spec: TriggerSpec, first: Date, now: Date): { latest: Date; many: boolean } {
  if (spec.kind === 'interval') {
    const step = spec.intervalSeconds * 1_000;
    const missed = Math.floor((now.getTime() - first.getTime()) / step);
    return { latest: new Date(first.getTime() + missed * step), many: missed > 0 };
  }
  let latest = first;
  for (let i = 0; i < MAX_DUE_FIRES; i++) {
    const n = nextFire(spec, latest);
    if (n === null || n.getTime() > now.getTime()) return { latest, many: i > 0 };
    latest = n;
  }
  return { latest, many: true };
}

/** Decides one due trigger (its `next_fire_at` is `first`, at or before `now`). */
export function decideFire(spec: TriggerSpec, misfire: MisfirePolicy, first: Date, now: Date): FireDecision {
  const { latest, many } = latestDue(spec, first, now);
  // The first fire after now, on the trigger's own grid (an interval keeps its phase).
  let next = nextFire(spec, latest);
  if (next !== null && next.getTime() <= now.getTime()) next = nextFire(spec, now);
  const onTime = !many && now.getTime() - latest.getTime() <= MISFIRE_GRACE_MS;
  return { action: onTime ? 'fire' : misfire === 'fireOnce' ? 'collapse' : 'skip', at: latest, next };
}
