/**
 * Row policy cost (docs/authorization.md): a user whose grant carries a
 * rowFilter (`owner = $actor.subjectId`) and a field mask against a user
 * with the bare grant, on point reads and a filtered list, with wrk, ABAB.
 * A harness, not a test: it prints the ratios.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/row-policy/compare.js   # BENCH_BACKEND=pglite|postgres (default postgres)
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../../test/support/client.js';
import { startServer } from '../../test/support/server.js';
import { ensureWrk, runWrk, writeScript } from '../hot-path/wrk.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const backend = process.env.BENCH_BACKEND === 'pglite' ? 'pglite' : 'postgres';

async function user(admin: Client): Promise<{ token: string; subjectId: string }> {
  const anon = admin.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  await anon.post('/api/identity/register', { email, password: 'long enough pw' });
  const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
  const me = await anon.with({ token: login.body.accessToken }).get('/api/identity/me');
  return { token: login.body.accessToken as string, subjectId: me.body.data.subjectId as string };
}

async function main(): Promise<void> {
  ensureWrk();
  const server = await startServer({ backend });
  try {
    const p = await bootstrapProject(server.url, server.adminToken);
    const admin = p.client;
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'owner', type: 'ID', nullable: false }, { name: 'total', type: 'Int', nullable: true }, { name: 'region', type: 'String', nullable: true }] });
    const plain = await user(admin);
    const policy = await user(admin);
    await admin.post(`/api/projects/${p.projectId}/capability-grants`, { subjectId: plain.subjectId, grant: 'entity:Order:read' });
    await admin.post(`/api/projects/${p.projectId}/capability-grants`, { subjectId: policy.subjectId, grant: 'entity:Order:read', rowFilter: { owner: { eq: { $actor: 'subjectId' } } }, fields: ['owner', 'region'] });
    const ids: string[] = [];
    for (let b = 0; b < 10; b++) {
      const items = Array.from({ length: 500 }, (_, i) => ({ owner: i % 2 === 0 ? policy.subjectId : randomUUID(), total: i, region: i % 3 === 0 ? 'eu' : 'us' }));
      const r = await admin.post('/api/orders/batch', { items });
      for (const row of r.body.data as Array<{ id: string; owner: string }>) if (row.owner === policy.subjectId) ids.push(row.id);
    }
    const dir = mkdtempSync(join(tmpdir(), 'rp-bench-'));
    const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'x-service-tenant': p.tenant, 'x-service-project': p.project });
    const filter = encodeURIComponent(JSON.stringify({ region: { eq: 'eu' } }));
    const workloads = {
      'point read': ids.slice(0, 500).map((id) => `/api/orders/${id}`),
      'list 20, filter, -createdAt': [`/api/orders?pageSize=20&sort=-createdAt&filter=${filter}`],
    };
    for (const [name, paths] of Object.entries(workloads)) {
      const scripts = {
        plain: writeScript(dir, `${name.length}-plain`, { method: 'GET', paths, headers: headers(plain.token) }),
        policy: writeScript(dir, `${name.length}-policy`, { method: 'GET', paths, headers: headers(policy.token) }),
      };
      await runWrk(server.url, scripts.plain, { threads: 2, connections: 50, durationS: 2 });
      await runWrk(server.url, scripts.policy, { threads: 2, connections: 50, durationS: 2 });
      const got = { plain: [] as number[], policy: [] as number[] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const who of (r % 2 === 0 ? ['plain', 'policy'] : ['policy', 'plain']) as Array<'plain' | 'policy'>) {
          const res = await runWrk(server.url, scripts[who], { threads: 2, connections: 50, durationS: DURATION_S });
          if (res.errors > 0) console.log(`[bench] ${name} ${who}: ${res.errors} errors`);
          got[who].push(res.reqPerSec);
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const a = median(got.plain);
      const b = median(got.policy);
      console.log(`${name}: no policy ${a.toFixed(0)} req/s, rowFilter + mask ${b.toFixed(0)} req/s, ratio ${(b / a).toFixed(2)}x`);
    }
  } finally {
    await server.close();
  }
}

void main();
