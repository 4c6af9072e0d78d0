import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { CATEGORIES, CREATED_PREFIX, ENTITY_PATH, listQuery, makeItem } from './item-model.js';

export const WORKLOADS = ['read', 'list', 'create'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

export const WORKLOAD_LABELS: Record<WorkloadName, string> = {
  read: 'point read (GET /items/{id})',
  list: 'list filter+sort, 20 rows',
  create: 'create (POST /items)',
};

/** Where to send the load and with which headers. */
export interface Target {
  url: string;
  headers: Record<string, string>;
  ids: string[];
}

export interface RunSettings {
  durationS: number;
  warmupS: number;
  connections: number;
}

export interface WorkloadResult {
  workload: WorkloadName;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  total2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  /** Set when the workload could not be measured (failed probe or autocannon error). */
  error?: string;
}

/** One autocannon request template whose path/body rotates on every request. */
function requestFor(workload: WorkloadName, target: Target): AutocannonRequest {
  const base = `/api/${ENTITY_PATH}`;
  let n = Math.floor(Math.random() * 1_000_000);
  switch (workload) {
    case 'read': {
      const ids = target.ids;
      if (ids.length === 0) throw new Error('no ids to read');
      return {
        method: 'GET',
        path: `${base}/${ids[0]}`,
        headers: target.headers,
        setupRequest: (req) => {
          req.path = `${base}/${ids[n++ % ids.length]}`;
          return req;
        },
      };
    }
    case 'list': {
      const paths = CATEGORIES.map((c) => `${base}?${listQuery(c)}`);
      return {
        method: 'GET',
        path: paths[0],
        headers: target.headers,
        setupRequest: (req) => {
          req.path = paths[n++ % paths.length];
          return req;
        },
      };
    }
    case 'create': {
      const bodies = Array.from({ length: 64 }, (_, i) => JSON.stringify(makeItem(i, CREATED_PREFIX)));
      return {
        method: 'POST',
        path: base,
        headers: { ...target.headers, 'content-type': 'application/json' },
        body: bodies[0],
        setupRequest: (req) => {
          req.body = bodies[n++ % bodies.length];
          return req;
        },
      };
    }
  }
}

const EXPECTED_STATUS: Record<WorkloadName, number> = { read: 200, list: 200, create: 201 };

/** One request outside the load generator, to fail fast (with the body) if the route is wrong. */
async function probe(workload: WorkloadName, target: Target): Promise<string | undefined> {
  const req = requestFor(workload, target);
  try {
    const res = await fetch(`${target.url}${req.path}`, {
      method: req.method,
      headers: req.headers,
      body: typeof req.body === 'string' ? req.body : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status !== EXPECTED_STATUS[workload]) return `probe ${req.method} ${req.path} -> ${res.status}: ${text.slice(0, 300)}`;
    return checkBody(workload, req.path ?? '', JSON.parse(text) as { data?: unknown });
  } catch (err) {
    return `probe ${req.method} ${req.path} failed: ${(err as Error).message}`;
  }
}

/** The answer must be the right one, so a server taking a shortcut (ignoring the filter) cannot look fast. */
function checkBody(workload: WorkloadName, path: string, body: { data?: unknown }): string | undefined {
  const data = body.data as Record<string, unknown> | Array<Record<string, unknown>> | undefined;
  switch (workload) {
    case 'read': {
      const id = path.slice(path.lastIndexOf('/') + 1);
      return !Array.isArray(data) && data?.id === id ? undefined : `probe read: expected data.id ${id}`;
    }
    case 'create':
      return !Array.isArray(data) && typeof data?.id === 'string' ? undefined : 'probe create: no data.id';
    case 'list': {
      if (!Array.isArray(data) || data.length !== 20) {
        return `probe list: expected data with 20 rows, got ${Array.isArray(data) ? data.length : typeof data}`;
      }
      const category = JSON.parse(new URLSearchParams(path.slice(path.indexOf('?') + 1)).get('filter') ?? '{}').category?.eq;
      if (data.some((r) => r.category !== category)) return `probe list: rows outside category ${category}`;
      for (let i = 1; i < data.length; i++) {
        if ((data[i]!.qty as number) > (data[i - 1]!.qty as number)) return 'probe list: rows not sorted by qty descending';
      }
      return undefined;
    }
  }
}

function run(workload: WorkloadName, target: Target, connections: number, durationS: number): Promise<AutocannonResult> {
  return autocannon({
    url: target.url,
    connections,
    duration: durationS,
    timeout: 10,
    requests: [requestFor(workload, target)],
  });
}

function failed(workload: WorkloadName, error: string): WorkloadResult {
  return { workload, reqPerSec: 0, p50Ms: 0, p99Ms: 0, total2xx: 0, non2xx: 0, errors: 0, timeouts: 0, durationS: 0, error };
}

/** Probe, warm up (discarded), then measure one workload against one target. */
export async function runWorkload(workload: WorkloadName, target: Target, s: RunSettings): Promise<WorkloadResult> {
  const probeError = await probe(workload, target);
  if (probeError !== undefined) return failed(workload, probeError);
  try {
    if (s.warmupS > 0) await run(workload, target, s.connections, s.warmupS);
    const r = await run(workload, target, s.connections, s.durationS);
    return {
      workload,
      reqPerSec: r.requests.average,
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      total2xx: r['2xx'],
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      durationS: r.duration,
    };
  } catch (err) {
    return failed(workload, `autocannon: ${(err as Error).message}`);
  }
}
