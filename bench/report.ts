import type { Backend } from './config.js';
import { WORKLOADS, WORKLOAD_LABELS, type WorkloadName, type WorkloadResult } from './workloads.js';

/** Target from the issue: on PostgreSQL, these workloads reach this share of the bare baseline's req/s. */
export const TARGET_RATIO = 0.7;
export const TARGET_WORKLOADS: readonly WorkloadName[] = ['read', 'list'];

/** Everything measured for one backend. */
export interface BackendRun {
  backend: Backend;
  seedRows: number;
  plinth: WorkloadResult[];
  /** The bare node:http + pg handler (PostgreSQL only). */
  baseline: WorkloadResult[];
  /** Raw per-segment results, in the order they ran (plinth and baseline are their combination). */
  segments: Array<{ target: 'plinth' | 'baseline'; results: WorkloadResult[] }>;
  notes: string[];
  error?: string;
}

export interface Verdict {
  workload: WorkloadName;
  ratio: number | null;
  met: boolean;
  /** Why the ratio cannot be trusted or computed, if so. */
  reason?: string;
}

/** A result is usable when it ran and (almost) every response was a 2xx. */
export function usable(r: WorkloadResult | undefined): string | undefined {
  if (r === undefined) return 'not measured';
  if (r.error !== undefined) return r.error;
  const total = r.total2xx + r.non2xx + r.errors + r.timeouts;
  if (total === 0 || r.total2xx === 0) return 'no successful responses';
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad / total > 0.01) return `${bad} of ${total} responses failed (non-2xx, errors, timeouts)`;
  return undefined;
}

export function ratioOf(plinth: WorkloadResult | undefined, baseline: WorkloadResult | undefined): number | null {
  if (usable(plinth) !== undefined || usable(baseline) !== undefined) return null;
  return plinth!.reqPerSec / baseline!.reqPerSec;
}

export function verdicts(run: BackendRun): Verdict[] {
  return TARGET_WORKLOADS.map((w) => {
    const p = run.plinth.find((r) => r.workload === w);
    const b = run.baseline.find((r) => r.workload === w);
    const reason = usable(p) ?? usable(b);
    const ratio = ratioOf(p, b);
    return reason !== undefined || ratio === null
      ? { workload: w, ratio: null, met: false, reason: reason ?? 'no ratio' }
      : { workload: w, ratio, met: ratio >= TARGET_RATIO };
  });
}

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

const COLS = [
  ['target', 22],
  ['workload', 30],
  ['req/s', 10],
  ['p50 ms', 8],
  ['p99 ms', 8],
  ['non-2xx', 8],
  ['errors', 7],
  ['ratio', 7],
] as const;

function line(cells: string[]): string {
  return cells.map((c, i) => pad(c, COLS[i]![1], i >= 2)).join('  ');
}

function row(target: string, r: WorkloadResult, ratio: number | null | undefined): string {
  if (r.error !== undefined) return line([target, WORKLOAD_LABELS[r.workload], 'FAILED', '', '', '', '', '']) + `\n    ${r.error}`;
  return line([
    target,
    WORKLOAD_LABELS[r.workload],
    fmt(r.reqPerSec, 0),
    fmt(r.p50Ms, 1),
    fmt(r.p99Ms, 1),
    String(r.non2xx),
    String(r.errors + r.timeouts),
    ratio === undefined ? '' : ratio === null ? 'n/a' : fmt(ratio, 2),
  ]);
}

/**
 * Per-segment req/s, so the reader sees how noisy the machine was: when one target's
 * segments differ by more than 1.5x, its ratio is flagged as noisy.
 */
function segmentLines(run: BackendRun): string[] {
  const out = ['  req/s per segment, in run order:'];
  for (const w of WORKLOADS) {
    const cells: string[] = [];
    let noisy = false;
    for (const target of ['plinth', 'baseline'] as const) {
      const values = run.segments
        .filter((s) => s.target === target)
        .map((s) => s.results.find((r) => r.workload === w))
        .filter((r): r is WorkloadResult => r !== undefined && r.error === undefined)
        .map((r) => r.reqPerSec);
      if (values.length === 0) continue;
      cells.push(`${target} ${values.map((v) => fmt(v, 0)).join(' / ')}`);
      if (values.length > 1 && Math.max(...values) > 1.5 * Math.min(...values)) noisy = true;
    }
    out.push(`    ${pad(w, 7)} ${cells.join('; ')}${noisy ? '  (noisy: segments differ by > 1.5x)' : ''}`);
  }
  return out;
}

/** Human-readable report for one backend; `baseline` is the bare PostgreSQL handler's results, if any. */
export function formatBackend(run: BackendRun, baseline: WorkloadResult[]): string {
  const out: string[] = [];
  const title = run.backend === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded)';
  out.push('', `== ${title}: ${run.seedRows} seeded rows ==`);
  if (run.error !== undefined) out.push(`  ERROR: ${run.error}`);
  out.push(line(COLS.map((c) => c[0])));
  out.push(line(COLS.map((c) => '-'.repeat(c[1]))));
  for (const w of WORKLOADS) {
    const p = run.plinth.find((r) => r.workload === w);
    if (p === undefined) continue;
    const b = baseline.find((r) => r.workload === w);
    out.push(row(`plinth/${run.backend}`, p, baseline.length === 0 ? undefined : ratioOf(p, b)));
  }
  for (const b of run.baseline) out.push(row('bare node:http + pg', b, undefined));
  if (run.segments.length > 1) out.push(...segmentLines(run));
  for (const n of run.notes) out.push(`  note: ${n}`);
  if (run.backend === 'postgres') {
    for (const v of verdicts(run)) {
      const label = `${WORKLOAD_LABELS[v.workload]} >= ${TARGET_RATIO.toFixed(2)} x baseline`;
      out.push(
        v.reason !== undefined
          ? `  TARGET ${label}: UNDETERMINED (${v.reason})`
          : `  TARGET ${label}: ${v.met ? 'MET' : 'NOT MET'} (ratio ${fmt(v.ratio!, 2)})`,
      );
    }
  } else if (baseline.length > 0) {
    out.push('  (ratios for PGlite compare against the bare PostgreSQL baseline; informational, no target)');
  }
  return out.join('\n');
}
