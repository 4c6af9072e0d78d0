/** The control-plane bench's table: one line per row count, plus what the merge did to main's table file. */
import type { WrkResult } from '../hot-path/wrk.js';
import type { MergeTiming, TableFile } from './operations.js';

export interface RowCountResult {
  rows: number;
  seedS: number;
  idleCreateS: number;
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
  /** Load average (1, 5, 15 min) when this row count was done. */
  load: string;
}

export interface ReportSettings {
  commit: string;
  connections: number;
  threads: number;
  durationS: number;
  pool: number;
  startLoad: string;
  endLoad: string;
  preRollMs: number;
  postRollMs: number;
}

const s = (x: number): string => x.toFixed(3);
const ms = (x: number): string => x.toFixed(2);
const pad = (cells: string[], widths: number[]): string => `| ${cells.map((c, i) => c.padStart(widths[i]!)).join(' | ')} |`;

export function formatTable(results: RowCountResult[], set: ReportSettings): string {
  const head = ['rows', 'branch create s', '(idle)', 'merge s', 'W1 p99 baseline', 'pause window', 'during create', 'during merge', 'W1 p50 base/create/merge', 'W1 req/s base/create/merge', 'table rewritten'];
  const lines = results.map((r) => [
    String(r.rows), s(r.createS), s(r.idleCreateS), s(r.merge.mergeS),
    `${ms(r.baseline.p99Ms)} ms`, `${ms(r.idleWindow.p99Ms)} ms`, `${ms(r.duringCreate.p99Ms)} ms`, `${ms(r.duringMerge.p99Ms)} ms`,
    `${ms(r.baseline.p50Ms)}/${ms(r.duringCreate.p50Ms)}/${ms(r.duringMerge.p50Ms)} ms`,
    `${r.baseline.reqPerSec.toFixed(0)}/${r.duringCreate.reqPerSec.toFixed(0)}/${r.duringMerge.reqPerSec.toFixed(0)}`,
    r.rewritten ? 'yes' : 'no',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const out = [
    `Control-plane bench (issue 14), PostgreSQL, commit ${set.commit}`,
    `W1 = granted user's GET /api/orders/{id}, wrk -t${set.threads} -c${set.connections} --latency; baseline ${set.durationS} s;`,
    `"during" windows = ${set.preRollMs} ms before the first call to ${set.postRollMs} ms after the last; "pause window" = the same around`,
    `a 300 ms sleep (wrk starting cold inside every window is in these figures too); DB pool ${set.pool}.`,
    `Load average (1/5/15 min) at start ${set.startLoad}, at end ${set.endLoad} (2 cores, shared machine).`,
    '',
    pad(head, widths),
    `|${widths.map((w) => '-'.repeat(w + 1) + ':').join('|')}|`,
    ...lines.map((l) => pad(l, widths)),
    '',
    'Per row count:',
    ...results.map((r) => `  ${r.rows}: seed ${r.seedS.toFixed(1)} s; proposal create ${s(r.merge.createS)} s, approve ${s(r.merge.approveS)} s, merge ${s(r.merge.mergeS)} s; ` +
      `windows ${r.duringCreate.durationS.toFixed(2)} s (create, ${r.duringCreate.requests} reads, max ${r.duringCreate.maxMs.toFixed(0)} ms) / ${r.duringMerge.durationS.toFixed(2)} s (merge, ${r.duringMerge.requests} reads, max ${r.duringMerge.maxMs.toFixed(0)} ms); ` +
      `errors ${r.baseline.errors}/${r.duringCreate.errors}/${r.duringMerge.errors}; main's table relfilenode ${r.tableBefore.relfilenode} → ${r.tableAfter.relfilenode}, ` +
      `${r.tableBefore.bytes} → ${r.tableAfter.bytes} bytes, ${r.tableBefore.columns} → ${r.tableAfter.columns} columns; load ${r.load}`),
    ...results.map((r) => `  ${r.rows} wrk --latency during merge: ${Object.entries(r.duringMerge.distribution ?? {}).map(([p, v]) => `${p}% ${ms(v)} ms`).join(', ')}`),
  ];
  return out.join('\n');
}
