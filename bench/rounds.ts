import type { WorkloadName, WorkloadResult } from './workloads.js';

/** The two things measured on PostgreSQL. */
export type TargetKind = 'plinth' | 'baseline';

/**
 * Order of measurement segments: ABBA repeated (plinth, baseline, baseline, plinth, …).
 * The machine's background load drifts during a run; with this order a linear drift
 * weighs the same on both sides, where plain "all plinth, then all baseline" would
 * credit the drift to one of them.
 */
export function segmentOrder(rounds: number): TargetKind[] {
  const out: TargetKind[] = [];
  for (let i = 0; i < rounds; i++) out.push(...((i % 2 === 0 ? ['plinth', 'baseline'] : ['baseline', 'plinth']) as TargetKind[]));
  return out;
}

/**
 * Merge the segments of one workload: req/s, p50 and p99 are the mean over segments
 * (segments have equal durations); counters are summed. A failed segment fails the workload.
 */
export function combineSegments(workload: WorkloadName, parts: WorkloadResult[]): WorkloadResult {
  const failed = parts.find((p) => p.error !== undefined);
  if (failed !== undefined) return { ...failed, workload };
  if (parts.length === 0) throw new Error(`no segments for ${workload}`);
  if (parts.length === 1) return parts[0]!;
  const mean = (f: (r: WorkloadResult) => number) => parts.reduce((s, p) => s + f(p), 0) / parts.length;
  const sum = (f: (r: WorkloadResult) => number) => parts.reduce((s, p) => s + f(p), 0);
  return {
    workload,
    reqPerSec: mean((r) => r.reqPerSec),
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: mean((r) => r.p99Ms),
    total2xx: sum((r) => r.total2xx),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    durationS: sum((r) => r.durationS),
  };
}
