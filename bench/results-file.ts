import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { cpus } from 'node:os';
import type { BenchConfig } from './config.js';
import { TARGET_RATIO, ratioOf, verdicts, type BackendRun } from './report.js';

/** Write the run as JSON (bench/results/latest.json); the folder's .gitignore keeps it out of git. */
export async function writeResults(cfg: BenchConfig, runs: BackendRun[], startedAt: Date): Promise<void> {
  const baseline = runs.find((r) => r.backend === 'postgres')?.baseline ?? [];
  const doc = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model },
    settings: {
      durationS: cfg.durationS,
      warmupS: cfg.warmupS,
      rounds: cfg.rounds,
      connections: cfg.connections,
      seedRows: cfg.seedRows,
      poolSize: cfg.poolSize,
      backends: cfg.backends,
    },
    targetRatio: TARGET_RATIO,
    backends: runs.map((run) => ({
      ...run,
      ratios: Object.fromEntries(
        run.plinth.map((p) => [p.workload, ratioOf(p, baseline.find((b) => b.workload === p.workload))]),
      ),
      targets: run.backend === 'postgres' ? verdicts(run) : undefined,
    })),
  };
  await mkdir(dirname(cfg.resultsFile), { recursive: true });
  await writeFile(cfg.resultsFile, JSON.stringify(doc, null, 2) + '\n');
}
