/**
 * Summarizes a V8 `.cpuprofile` (from `BENCH_CPU_PROF_DIR`): the functions with the most self
 * time, and the total time under each top-level source folder of this repository, so a
 * before/after pair can be written into docs/performance.md.
 *
 *   node dist/bench/hot-path/profile-summary.js <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: profile-summary <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (n: ProfileNode): string => {
  const url = n.callFrame.url.replace(/^file:\/\//, '');
  const m = /\/(dist\/[^?]+|node_modules\/[^/]+(?:\/[^/]+)?)/.exec(url);
  return m !== null ? m[1]! : url === '' ? '(native)' : url.startsWith('node:') ? url : url.split('/').slice(-2).join('/');
};
const label = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'} ${where(n)}:${n.callFrame.lineNumber + 1}`;

const self = new Map<string, number>();
const area = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  self.set(label(n), (self.get(label(n)) ?? 0) + us);
  const w = where(n);
  const a = w.startsWith('dist/') ? w.split('/').slice(0, 3).join('/') : w.startsWith('node_modules/') ? w : n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : 'node internals';
  area.set(a, (area.get(a) ?? 0) + us);
}
const pct = (us: number): string => `${((100 * us) / total).toFixed(1)} %`;
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled\n\nself time, top ${top}:`);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us).padStart(7)}  ${k}`);
console.log('\nself time by area:');
for (const [k, us] of [...area].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us).padStart(7)}  ${k}`);
