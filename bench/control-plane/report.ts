/**
 * The control-plane bench's table: one line per row count with the medians over the rounds,
 * then every round's figures and what each merge did to main's table file.
 */
import type { WrkResult } from '../hot-path/wrk.js';
import type { MergeTiming, TableFile } from './operations.js';
import type { CpuCost } from './cpu.js';

/** One round of one row count. */
export interface RoundResult {
  createS: number;
  merge: MergeTiming;
  baseline: WrkResult;
  /** A "during" window around a pause: the control for (b) and (c). */
  idleWindow: WrkResult;
  duringCreate: WrkResult;
  duringMerge: WrkResult;
  tableBefore: TableFile;
  tableAfter: TableFile;
  rewritten: boolean;
}

export interface RowCountResult {
  rows: number;
  seedS: number;
  /** One branch create before any load (the figure docs/branches.md had before), with its CPU. */
  idleCreate: CpuCost;
  /** One proposal create + approve + merge of a field add before any load, with its CPU. */
  idleMerge: CpuCost;
  rounds: RoundResult[];
  /** Load average (1, 5, 15 min) when this row count was done. */
  load: string;
}

export interface ReportSettings {
  commit: string;
  connections: number;
  threads: number;
  durationS: number;
  rounds: number;
  pool: number;
  startLoad: string;
  endLoad: string;
  preRollMs: number;
  postRollMs: number;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const s3 = (x: number): string => x.toFixed(3);
const ms = (x: number): string => x.toFixed(1);
const pad = (cells: string[], widths: number[]): string => `| ${cells.map((c, i) => c.padStart(widths[i]!)).join(' | ')} |`;
type Window = 'baseline' | 'idleWindow' | 'duringCreate' | 'duringMerge';
const WINDOWS: Window[] = ['baseline', 'idleWindow', 'duringCreate', 'duringMerge'];

function tableOf(head: string[], lines: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  return [pad(head, widths), `|${widths.map((w) => '-'.repeat(w + 1) + ':').join('|')}|`, ...lines.map((l) => pad(l, widths))];
}

export function formatTable(results: RowCountResult[], set: ReportSettings): string {
  const med = (r: RowCountResult, f: (x: RoundResult) => number): number => median(r.rounds.map(f));
  const w = (r: RowCountResult, win: Window, f: (x: WrkResult) => number): number => med(r, (x) => f(x[win]));
  const main = tableOf(
    ['rows', 'branch create s', 'idle create s', 'merge s', 'W1 p99 baseline', 'pause window', 'during create', 'during merge', 'table rewritten'],
    results.map((r) => [
      String(r.rows), s3(med(r, (x) => x.createS)), s3(r.idleCreate.wallS), s3(med(r, (x) => x.merge.mergeS)),
      ...WINDOWS.map((win) => `${ms(w(r, win, (x) => x.p99Ms))} ms`),
      r.rounds.some((x) => x.rewritten) ? 'yes' : 'no',
    ]),
  );
  const secondary = tableOf(
    ['rows', 'W1 p50 base / pause / create / merge (ms)', 'W1 req/s base / pause / create / merge', 'window s create / merge'],
    results.map((r) => [
      String(r.rows),
      WINDOWS.map((win) => ms(w(r, win, (x) => x.p50Ms))).join(' / '),
      WINDOWS.map((win) => w(r, win, (x) => x.reqPerSec).toFixed(0)).join(' / '),
      `${w(r, 'duringCreate', (x) => x.durationS).toFixed(2)} / ${w(r, 'duringMerge', (x) => x.durationS).toFixed(2)}`,
    ]),
  );
  const cpu = tableOf(
    ['rows', 'idle create: wall s', 'server CPU s', 'database CPU s', 'database CPU µs/row', 'idle propose+approve+merge: wall s', 'server CPU s', 'database CPU s'],
    results.map((r) => [
      String(r.rows), s3(r.idleCreate.wallS), r.idleCreate.serverCpuS.toFixed(2), r.idleCreate.dbCpuS.toFixed(2), ((r.idleCreate.dbCpuS * 1e6) / r.rows).toFixed(1),
      s3(r.idleMerge.wallS), r.idleMerge.serverCpuS.toFixed(2), r.idleMerge.dbCpuS.toFixed(2),
    ]),
  );
  const rounds = results.flatMap((r) => r.rounds.map((x, i) =>
    `  ${r.rows} round ${i + 1}: create ${s3(x.createS)} s (W1 p99 ${ms(x.duringCreate.p99Ms)} ms, max ${x.duringCreate.maxMs.toFixed(0)} ms, ${x.duringCreate.requests} reads); ` +
    `proposal create ${s3(x.merge.createS)} s, approve ${s3(x.merge.approveS)} s, merge ${s3(x.merge.mergeS)} s (W1 p99 ${ms(x.duringMerge.p99Ms)} ms, max ${x.duringMerge.maxMs.toFixed(0)} ms, ${x.duringMerge.requests} reads); ` +
    `baseline p99 ${ms(x.baseline.p99Ms)} ms, pause p99 ${ms(x.idleWindow.p99Ms)} ms; errors ${WINDOWS.map((win) => x[win].errors).join('/')}; ` +
    `main's table relfilenode ${x.tableBefore.relfilenode} → ${x.tableAfter.relfilenode}, ${x.tableBefore.bytes} → ${x.tableAfter.bytes} bytes, ${x.tableBefore.columns} → ${x.tableAfter.columns} columns; ` +
    `wrk --latency during merge: ${Object.entries(x.duringMerge.distribution ?? {}).map(([p, v]) => `${p}% ${ms(v)}`).join(', ')} ms`));
  return [
    `Control-plane bench (issue 14), PostgreSQL, commit ${set.commit}; medians of ${set.rounds} rounds per row count`,
    `W1 = granted user's GET /api/orders/{id}, wrk -t${set.threads} -c${set.connections} --latency; baseline ${set.durationS} s after a warm-up;`,
    `"during" windows = ${set.preRollMs} ms before the first call to ${set.postRollMs} ms after the last (wrk stopped by SIGINT);`,
    `"pause window" = the same shape around a 300 ms sleep (wrk starts cold inside every window; this is their control). DB pool ${set.pool}.`,
    `"merge s" = the POST /proposals/{id}/merge call; the merge window also holds the proposal's create and approve calls.`,
    `Load average (1/5/15 min) at start ${set.startLoad}, at end ${set.endLoad} (2 cores, shared with other jobs).`,
    '',
    ...main,
    '',
    ...secondary,
    '',
    'Without load (before the rounds; CPU from /proc, 10 ms ticks):',
    ...cpu,
    '',
    'Rounds:',
    ...rounds,
    ...results.map((r) => `  ${r.rows}: seeded in ${r.seedS.toFixed(1)} s through the batch route; load after: ${r.load}`),
  ].join('\n');
}
