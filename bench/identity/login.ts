/**
 * Login latency under concurrency at each password hash cost (issue 22,
 * finding 10): registers USERS accounts, then runs ROUNDS waves of
 * CONCURRENCY simultaneous logins over HTTP and prints p50/p95/p99/max and
 * the process's peak RSS. The hash gate (PASSWORD_HASH_CONCURRENCY) is what
 * bounds memory: at most that many 128 MiB scrypt blocks at once.
 * Figures go to docs/identity.md ("Password hashing").
 *
 *   node dist/bench/identity/login.js                     # costs 14 and 17, PGlite
 *   BENCH_COSTS=17 BENCH_CONCURRENCY=16 BENCH_ROUNDS=4 node dist/bench/identity/login.js
 */
import { randomBytes } from 'node:crypto';
import { parseConfig } from '../../node/config.js';
import { startNode } from '../../node/start.js';

const COSTS = (process.env.BENCH_COSTS ?? '14,17').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const USERS = 4;
const PASSWORD = 'a bench password of some length';

async function post(url: string, path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function measure(cost: number): Promise<void> {
  const admin = `bench-${randomBytes(8).toString('hex')}`;
  const node = await startNode(parseConfig({
    HOST: '127.0.0.1', PORT: '0', GRPC_PORT: '0', DATA_DIR: 'memory:', SERVICE_ADMIN_TOKEN: admin, LOG_LEVEL: 'error',
    PASSWORD_HASH_COST: String(cost), ...(process.env.BENCH_DATABASE_URL === undefined ? {} : { DATABASE_URL: process.env.BENCH_DATABASE_URL }),
  }));
  try {
    const auth = { authorization: `Bearer ${admin}` };
    const slug = `b${randomBytes(4).toString('hex')}`;
    if ((await post(node.url, '/api/TenantRecord', { slug, name: slug }, auth)).status !== 201) throw new Error('tenant');
    if ((await post(node.url, '/api/projects/create', { tenant: slug, slug: 'app', name: 'app' }, auth)).status !== 201) throw new Error('project');
    const scope = { 'x-service-tenant': slug, 'x-service-project': 'app' };
    const emails = Array.from({ length: USERS }, (_, i) => `user${i}@bench.test`);
    for (const email of emails) if ((await post(node.url, '/api/identity/register', { email, password: PASSWORD }, scope)).status !== 201) throw new Error('register');
    let peakRss = process.memoryUsage.rss();
    const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()); }, 20);
    const times: number[] = [];
    let refused = 0;
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(Array.from({ length: CONCURRENCY }, async (_, i) => {
        const t0 = performance.now();
        // Distinct accounts and a spread of loopback addresses keep the login throttle out of the figures.
        const r = await post(node.url, '/api/identity/login', { email: emails[i % USERS], password: PASSWORD }, scope);
        if (r.status === 200) times.push(performance.now() - t0);
        else refused++;
      }));
    }
    const wall = performance.now() - started;
    clearInterval(sampler);
    times.sort((a, b) => a - b);
    const f = (n: number): string => `${n.toFixed(0)} ms`;
    console.log(`cost 2^${cost}: ${times.length} logins (${CONCURRENCY} at once × ${ROUNDS}), ${refused} refused; p50 ${f(pct(times, 50))}, p95 ${f(pct(times, 95))}, p99 ${f(pct(times, 99))}, max ${f(times.at(-1)!)}; ${(times.length / (wall / 1000)).toFixed(1)} logins/s; peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await node.stop();
  }
}

for (const cost of COSTS) await measure(cost);
