export type WorkloadName = 'W1' | 'W2' | 'W3' | 'W1P' | 'W2P' | 'G1' | 'G2' | 'G3' | 'W4' | 'G4';
/** A GraphQL workload and the REST workload it repeats. */
export const REST_OF: Record<'G1' | 'G2' | 'G3' | 'G4', 'W1' | 'W2' | 'W3' | 'W4'> = { G1: 'W1', G2: 'W2', G3: 'W3', G4: 'W4' };
/** Issue 12: the GraphQL list ÷ the REST list, same user, same run. */
export const GRAPHQL_LIST_TARGET = 0.8;
/** A policy workload and the workload it repeats without the policy. */
export const POLICY_OF: Record<'W1P' | 'W2P', 'W1' | 'W2'> = { W1P: 'W1', W2P: 'W2' };
export type TargetName = 'bare' | 'bare-prepared' | 'bare-uws' | 'plinth-user' | 'plinth-admin' | 'plinth-previous' | 'plinth-quota';

/** Issue 11: the granted user's W1/W3 with hard quotas on the project ÷ the same without quotas. */
export const QUOTA_TARGET = 0.95;

export interface Measured {
  round: number;
  target: TargetName;
  workload: WorkloadName;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  requests: number;
  /** CPU per request of the server process and of its database backends, µs (cpu-per-request.ts). */
  serverCpuUs: number;
  dbCpuUs: number;
}

export const WORKLOAD_LABELS: Record<WorkloadName, string> = {
  W1: 'W1 point read by id',
  W2: 'W2 list of 20, filtered (status) + sorted (-createdAt)',
  W3: 'W3 create (Plinth: + outbox row, same transaction)',
  W1P: 'W1P point read, row filter + field mask',
  W2P: 'W2P list of 20, row filter + field mask',
  G1: 'G1 GraphQL point read by id',
  G2: 'G2 GraphQL list of 20, filtered + sorted',
  G3: 'G3 GraphQL create',
  W4: 'W4 list of 20 shipments, filtered + sorted, include=order (REST)',
  G4: 'G4 GraphQL list of 20 shipments with their order (nested to-one)',
};

/** Issue 9's targets, granted user vs the bare baseline with plain statements. */
export const TARGETS: Record<'W1' | 'W2' | 'W3', number> = { W1: 1.0, W2: 1.0, W3: 0.75 };

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface Median { reqPerSec: number; p99Ms: number; runs: number; serverCpuUs: number; dbCpuUs: number }

export function formatReport(measured: Measured[], peakRss: Record<string, number>, settings: Record<string, unknown>, notes: string[] = []): { text: string; medians: Record<string, Median> } {
  const medians: Record<string, Median> = {};
  const of = (t: TargetName, w: WorkloadName): Median | undefined => {
    const xs = measured.filter((m) => m.target === t && m.workload === w);
    if (xs.length === 0) return undefined;
    const r: Median = {
      reqPerSec: median(xs.map((x) => x.reqPerSec)), p99Ms: median(xs.map((x) => x.p99Ms)), runs: xs.length,
      serverCpuUs: median(xs.map((x) => x.serverCpuUs)), dbCpuUs: median(xs.map((x) => x.dbCpuUs)),
    };
    medians[`${t}/${w}`] = r;
    return r;
  };
  const fmt = (m: Median | undefined): string => (m === undefined ? '–' : `${m.reqPerSec.toFixed(0)} (p99 ${m.p99Ms.toFixed(1)} ms)`);
  const lines = [
    '',
    `| workload | bare node:http + pg | bare, prepared | Plinth, granted user | ratio (target) | Plinth, admin |`,
    `|---|---:|---:|---:|---:|---:|`,
  ];
  const previous = measured.some((m) => m.target === 'plinth-previous');
  if (previous) {
    lines[1] = lines[1]!.replace('| Plinth, admin |', '| Plinth, admin | previous build, granted user (ratio to bare) |');
    lines[2] = lines[2]! + '---:|';
  }
  for (const w of ['W1', 'W2', 'W3'] as const) {
    const bare = of('bare', w);
    const prev = previous ? of('plinth-previous', w) : undefined;
    const prevCell = !previous ? '' : ` ${fmt(prev)}${bare !== undefined && prev !== undefined ? ` (${(prev.reqPerSec / bare.reqPerSec).toFixed(2)}×)` : ''} |`;
    const prep = of('bare-prepared', w);
    const user = of('plinth-user', w);
    const admin = of('plinth-admin', w);
    const ratio = bare !== undefined && user !== undefined ? user.reqPerSec / bare.reqPerSec : NaN;
    const adminRatio = bare !== undefined && admin !== undefined ? ` (${(admin.reqPerSec / bare.reqPerSec).toFixed(2)}×)` : '';
    lines.push(`| ${WORKLOAD_LABELS[w]} | ${fmt(bare)} | ${fmt(prep)} | ${fmt(user)} | **${ratio.toFixed(2)}×** (≥ ${TARGETS[w].toFixed(2)}) | ${fmt(admin)}${adminRatio} |${prevCell}`);
  }
  lines.push(...fairTable(measured, of, fmt));
  lines.push(...cpuTable(of));
  lines.push(...policyTable(of, fmt));
  lines.push(...quotaTable(of, fmt));
  lines.push(...graphqlTable(of, fmt));
  if (notes.length > 0) lines.push('', ...notes);
  lines.push('', `peak RSS (MB): ${Object.entries(peakRss).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
  lines.push(`req/s are medians of ${String(settings.rounds)} rounds of ${String(settings.durationS)} s after ${String(settings.warmupS)} s warm-up; wrk -t${String(settings.threads)} -c${String(settings.connections)}; commit ${String(settings.commit)}.`);
  return { text: lines.join('\n'), medians };
}

/**
 * Against the fair baseline (issue 29): uWebSockets.js + pg with prepared statements and the
 * same pool, so the ratio is Plinth's own overhead. Each round's ratio is taken within the
 * round (both servers measured minutes apart), and the spread over rounds is shown.
 */
function fairTable(measured: Measured[], of: (t: TargetName, w: WorkloadName) => Median | undefined, fmt: (m: Median | undefined) => string): string[] {
  if (!measured.some((m) => m.target === 'bare-uws')) return [];
  const rows: string[] = [];
  for (const w of ['W1', 'W2', 'W3'] as const) {
    const perRound = [...new Set(measured.map((m) => m.round))].flatMap((round) => {
      const at = (t: TargetName): Measured | undefined => measured.find((m) => m.round === round && m.target === t && m.workload === w);
      const user = at('plinth-user');
      const fair = at('bare-uws');
      return user === undefined || fair === undefined ? [] : [user.reqPerSec / fair.reqPerSec];
    });
    rows.push(`| ${WORKLOAD_LABELS[w]} | ${fmt(of('bare-uws', w))} | ${fmt(of('plinth-user', w))} | **${median(perRound).toFixed(2)}×** | ${perRound.map((r) => r.toFixed(2)).join(' / ')} |`);
  }
  return ['', '| workload | bare uWS + pg, prepared (fair baseline) | Plinth, granted user | ratio (median) | ratio per round |', '|---|---:|---:|---:|---:|', ...rows];
}

/** W1P/W2P next to the same workload without policy and the bare baseline, all medians of this run. */
function policyTable(of: (t: TargetName, w: WorkloadName) => Median | undefined, fmt: (m: Median | undefined) => string): string[] {
  const rows: string[] = [];
  for (const [p, plain] of Object.entries(POLICY_OF) as Array<['W1P' | 'W2P', 'W1' | 'W2']>) {
    const policy = of('plinth-user', p);
    if (policy === undefined) continue;
    const user = of('plinth-user', plain);
    const bare = of('bare', plain);
    const ratio = (b: Median | undefined): string => (b === undefined ? '–' : `**${(policy.reqPerSec / b.reqPerSec).toFixed(2)}×**`);
    rows.push(`| ${WORKLOAD_LABELS[p]} | ${fmt(policy)} | ${fmt(user)} | ${ratio(user)} | ${ratio(bare)} |`);
  }
  if (rows.length === 0) return [];
  return ['', `| policy workload | Plinth, policy user | Plinth, user without policy (same workload) | ÷ user without policy | ÷ bare |`, `|---|---:|---:|---:|---:|`, ...rows];
}

/** W1/W3 of the granted user with hard quotas on the project next to the same without, medians of this run. */
function quotaTable(of: (t: TargetName, w: WorkloadName) => Median | undefined, fmt: (m: Median | undefined) => string): string[] {
  const rows: string[] = [];
  for (const w of ['W1', 'W3'] as const) {
    const quota = of('plinth-quota', w);
    const user = of('plinth-user', w);
    if (quota === undefined || user === undefined) continue;
    rows.push(`| ${WORKLOAD_LABELS[w]} | ${fmt(quota)} | ${fmt(user)} | **${(quota.reqPerSec / user.reqPerSec).toFixed(2)}×** (≥ ${QUOTA_TARGET.toFixed(2)}) |`);
  }
  if (rows.length === 0) return [];
  return ['', `| quota workload | Plinth, user, hard read + write quotas | Plinth, user, no quota | ratio (target) |`, `|---|---:|---:|---:|`, ...rows];
}

/** G1–G3 next to the REST workload each repeats, same granted user, medians of this run. */
function graphqlTable(of: (t: TargetName, w: WorkloadName) => Median | undefined, fmt: (m: Median | undefined) => string): string[] {
  const rows: string[] = [];
  for (const [g, rest] of Object.entries(REST_OF) as Array<['G1' | 'G2' | 'G3' | 'G4', 'W1' | 'W2' | 'W3' | 'W4']>) {
    const graph = of('plinth-user', g);
    const user = of('plinth-user', rest);
    if (graph === undefined || user === undefined) continue;
    const target = g === 'G2' || g === 'G4' ? ` (≥ ${GRAPHQL_LIST_TARGET.toFixed(2)})` : '';
    rows.push(`| ${WORKLOAD_LABELS[g]} | ${fmt(graph)} | ${fmt(user)} | **${(graph.reqPerSec / user.reqPerSec).toFixed(2)}×**${target} |`);
  }
  if (rows.length === 0) return [];
  return ['', `| GraphQL workload | Plinth, user, POST /graphql | Plinth, user, REST twin | ratio (target) |`, `|---|---:|---:|---:|`, ...rows];
}

/**
 * CPU per request (server + database, µs, medians): the work each request
 * costs, which a busy machine barely moves. bare ÷ Plinth is the share of
 * the bare server's efficiency Plinth reaches (1.00 = as cheap per request).
 */
function cpuTable(of: (t: TargetName, w: WorkloadName) => Median | undefined): string[] {
  const cell = (m: Median | undefined): string => (m === undefined || Number.isNaN(m.serverCpuUs) ? '–' : `${(m.serverCpuUs + m.dbCpuUs).toFixed(0)} (${m.serverCpuUs.toFixed(0)} + ${m.dbCpuUs.toFixed(0)})`);
  const total = (m: Median | undefined): number => (m === undefined ? NaN : m.serverCpuUs + m.dbCpuUs);
  const rows: string[] = [];
  for (const w of ['W1', 'W2', 'W3'] as const) {
    const bare = of('bare', w);
    const user = of('plinth-user', w);
    const prev = of('plinth-previous', w);
    if (bare === undefined || user === undefined) continue;
    const prevCell = prev === undefined ? '–' : `${cell(prev)}, ${(total(bare) / total(prev)).toFixed(2)}×`;
    rows.push(`| ${WORKLOAD_LABELS[w]} | ${cell(bare)} | ${cell(user)} | **${(total(bare) / total(user)).toFixed(2)}×** | ${prevCell} |`);
  }
  if (rows.length === 0) return [];
  return ['', '| CPU per request, µs (server + database) | bare | Plinth, granted user | bare ÷ Plinth | previous build, bare ÷ previous |', '|---|---:|---:|---:|---:|', ...rows];
}
