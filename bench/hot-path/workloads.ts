/**
 * The hot-path workloads W1–W3 as wrk scripts, and the probe that checks a server answers
 * them right before anything is measured. Shared by the hot-path bench (bench/hot-path/run.ts)
 * and the control-plane bench (bench/control-plane/run.ts), which measures W1 while branches
 * are created and proposals merged.
 */
import type { Fixture } from './fixture.js';
import { CREATED_PREFIX, ENTITY_PATH, STATUSES, listQuery, makeOrder } from './order-model.js';
import { writeScript, type WrkScript } from './wrk.js';

export type CoreWorkload = 'W1' | 'W2' | 'W3';

/** Writes W1 (read by id), W2 (filtered list) and W3 (create) for `bearer` (null: no credential, the bare baseline) into `dir`. */
export function workloadScripts(dir: string, f: Fixture, bearer: string | null, tag: string): Record<CoreWorkload, string> {
  const auth: Record<string, string> = bearer === null ? {} : { Authorization: `Bearer ${bearer}` };
  const headers = { ...auth, 'X-Service-Tenant': f.tenantSlug, 'X-Service-Project': f.projectSlug };
  const base = `/api/${ENTITY_PATH}`;
  // 5,000 ids spread over the table keep the rotation in the Lua state small.
  const step = Math.max(1, Math.floor(f.ids.length / 5000));
  const ids = f.ids.filter((_, i) => i % step === 0);
  const w: Record<CoreWorkload, WrkScript> = {
    W1: { method: 'GET', paths: ids.map((id) => `${base}/${id}`), headers },
    W2: { method: 'GET', paths: STATUSES.map((s) => `${base}?${listQuery(s)}`), headers },
    W3: {
      method: 'POST', paths: [base], headers: { ...headers, 'Content-Type': 'application/json' },
      // Created rows belong to the policy user like the seeded ones: W1P/W2P run after W3 in a
      // segment, and rows outside the row filter sorted first would make W2P scan past them.
      bodies: Array.from({ length: 64 }, (_, i) => JSON.stringify(makeOrder(i, CREATED_PREFIX, f.policyUser?.subjectId))),
    },
  };
  return { W1: writeScript(dir, `${tag}-W1`, w.W1), W2: writeScript(dir, `${tag}-W2`, w.W2), W3: writeScript(dir, `${tag}-W3`, w.W3) };
}

/** One request outside wrk so a wrong route or answer fails loudly instead of measuring errors fast. */
export async function probeWorkloads(url: string, f: Fixture, bearer: string | null): Promise<void> {
  const headers: Record<string, string> = { 'x-service-tenant': f.tenantSlug, 'x-service-project': f.projectSlug };
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  const one = await fetch(`${url}/api/${ENTITY_PATH}/${f.ids[0]}`, { headers });
  const body = (await one.json()) as { data?: { id?: string } };
  if (one.status !== 200 || body.data?.id !== f.ids[0]) throw new Error(`probe read: ${one.status} ${JSON.stringify(body).slice(0, 300)}`);
  const list = await fetch(`${url}/api/${ENTITY_PATH}?${listQuery('paid')}`, { headers });
  const lb = (await list.json()) as { data?: Array<{ status: string; createdAt: string }> };
  const rows = lb.data ?? [];
  if (list.status !== 200 || rows.length !== 20 || rows.some((r) => r.status !== 'paid')) throw new Error(`probe list: ${list.status} ${JSON.stringify(lb).slice(0, 300)}`);
  for (let i = 1; i < rows.length; i++) if (rows[i]!.createdAt > rows[i - 1]!.createdAt) throw new Error('probe list: not sorted by -createdAt');
}
