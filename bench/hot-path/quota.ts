/**
 * The quota workloads of issue 11: W1 and W3 as the same granted user, on the same project,
 * with hard `read.monthly` and `write.monthly` quotas whose limits are far above the run's
 * volume, so nothing is refused and the difference to W1/W3 without quotas is the cost of
 * the quota stage (docs/usage.md "Quotas"), not of refusals.
 */
import { call, expectStatus as expect } from '../http-call.js';
import type { Fixture } from './fixture.js';

/** Far above any run's volume (a 12 s segment does well under 10^6 requests), a safe integer. */
export const BENCH_QUOTA_LIMIT = 1_000_000_000_000;
const KINDS = ['read.monthly', 'write.monthly'] as const;

/** Creates the hard quotas on the fixture's project; answers their ids for `dropBenchQuotas`. */
export async function createBenchQuotas(url: string, f: Fixture): Promise<string[]> {
  const admin = { authorization: `Bearer ${f.adminToken}` };
  const ids: string[] = [];
  for (const kind of KINDS) {
    const a = await call('POST', `${url}/api/Usage/${f.projectId}/quotas`, admin, { kind, limit: BENCH_QUOTA_LIMIT, mode: 'hard' });
    expect(`quota ${kind}`, a, 201);
    ids.push((a.body as { data: { id: string } }).data.id);
  }
  return ids;
}

/** Deletes them again, so the segments without quotas measure a project that has none. */
export async function dropBenchQuotas(url: string, f: Fixture, ids: string[]): Promise<void> {
  const admin = { authorization: `Bearer ${f.adminToken}` };
  for (const id of ids) {
    const a = await call('DELETE', `${url}/api/Usage/${f.projectId}/quotas/${id}`, admin);
    if (a.status !== 204 && a.status !== 200) throw new Error(`drop quota ${id}: ${a.status} ${a.text.slice(0, 200)}`);
  }
}

/**
 * The quota stage really ran: the summary counts the probe's read against the read quota.
 * A build that ignored quotas would answer `used` 0 (or no entry) and the run stops here
 * instead of reporting a ratio of two identical paths.
 */
export async function probeQuota(url: string, f: Fixture): Promise<void> {
  const a = await call('GET', `${url}/api/Usage/${f.projectId}/summary`, { authorization: `Bearer ${f.adminToken}` });
  expect('quota summary', a, 200);
  const rows = (a.body as { data: Array<{ kind: string; used: number; limit: number }> }).data;
  const read = rows.find((r) => r.kind === 'read.monthly' && r.limit === BENCH_QUOTA_LIMIT);
  if (read === undefined || !(read.used > 0)) throw new Error(`probe quota: the read quota counted nothing: ${a.text.slice(0, 300)}`);
}
