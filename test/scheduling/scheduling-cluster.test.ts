/**
 * Scheduling in a cluster (issue 25 "Faults"): 3 NATS servers, 3 Plinth processes, one
 * PostgreSQL database.
 *   a. three nodes on one 1 s interval trigger for 60 s: no `scheduledFor` has two runs, and
 *      fires keep coming (the scanner is one activation, the unique key the backstop);
 *   b. kill -9 of the node running a long attempt: that attempt becomes `lost`, the run is
 *      retried once on another node and succeeds once, its write made once;
 *   c. the JetStream meta leader killed while an interval trigger fires: fires come late,
 *      never twice.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { NatsCluster } from '../support/nats-cluster.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { createTestDatabase } from '../support/server.js';
import { withServices } from '../support/services.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const report = (line: string): void => console.log(`[scheduling-cluster] ${line}`);
const NODE_IDS = ['sch-a', 'sch-b', 'sch-c'];

interface Res { status: number; body: any; text: string }

async function call(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Res> {
  try {
    const res = await fetch(baseUrl + path, {
      method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    let parsed: unknown;
    try { parsed = text === '' ? undefined : JSON.parse(text); } catch { parsed = undefined; }
    return { status: res.status, body: parsed, text };
  } catch (err) {
    return { status: 0, body: undefined, text: (err as Error).message };
  }
}

const brief = (r: Res): string => `${r.status} ${r.text.slice(0, 300)}`;

async function until<T>(what: string, ms: number, probe: () => Promise<T | null | undefined | false>, everyMs = 200): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms: ${what}`);
    await sleep(everyMs);
  }
}

withServices('scheduling in a cluster', ['nats', 'postgres'], () => {
  describe('scheduling in a cluster: 3 NATS servers, 3 Plinth nodes, one PostgreSQL database', { timeout: 600_000 }, () => {
    const adminToken = `sched-admin-${randomBytes(12).toString('hex')}`;
    const admin = { authorization: `Bearer ${adminToken}` };
    let nats: NatsCluster;
    let db: { url: string; drop(): Promise<void> };
    let pool: pg.Pool;
    const nodes: Array<PlinthProcess | null> = [null, null, null];
    let scoped: Record<string, string> = {};
    let schema = '';

    const alive = (): number[] => nodes.map((n, i) => (n?.alive() === true ? i : -1)).filter((i) => i >= 0);
    const via = (): string => nodes[alive()[0]!]!.url;

    async function startNode(i: number): Promise<void> {
      nodes[i] = await startPlinthProcess({
        databaseUrl: db.url, natsUrl: nats.natsUrl, adminToken, nodeId: NODE_IDS[i]!,
        env: { DB_POOL_SIZE: '4', GRPC_PORT: '0', ACTOR_LEASE_TTL_MS: '3000', AUTHORED_WORKERS: '1', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn' },
        echo: process.env.SCHEDULING_ECHO === '1',
      });
      await until(`${NODE_IDS[i]} ready`, 30_000, async () => (await call(nodes[i]!.url, 'GET', '/api/health/ready', {})).status === 200);
    }

    async function ensureNodes(): Promise<void> {
      for (let i = 0; i < NODE_IDS.length; i++) if (nodes[i]?.alive() !== true) await startNode(i);
    }

    async function sql<T extends pg.QueryResultRow = any>(text: string, params: unknown[] = []): Promise<T[]> {
      return (await pool.query<T>(text, params)).rows;
    }

    async function ok(r: Promise<Res>, status: number, what: string): Promise<any> {
      const a = await r;
      assert.equal(a.status, status, `${what}: ${brief(a)}`);
      return a.body?.data;
    }

    async function publishJob(name: string, code: string, grants: string[] = []): Promise<void> {
      await ok(call(via(), 'POST', '/api/SourceAsset/file', scoped, { path: `jobs/${name}.js`, content: code }), 201, `source ${name}`);
      await ok(call(via(), 'POST', '/api/Schema/handlers', scoped, { name, surface: 'ScheduledJob', source: `jobs/${name}.js`, grants }), 201, `handler ${name}`);
    }

    async function definition(name: string, handler: string, extra: Record<string, unknown> = {}): Promise<string> {
      return (await ok(call(via(), 'POST', '/api/scheduling/taskdefinition', scoped, { name, handler, ...extra }), 201, `definition ${name}`)).id;
    }

    async function duplicateFires(definitionId: string): Promise<number> {
      const r = await sql<{ n: string }>(`SELECT count(*) AS n FROM (SELECT scheduled_for FROM plinth.task_runs WHERE definition_id = $1 GROUP BY trigger_id, scheduled_for HAVING count(*) > 1) d`, [definitionId]);
      return Number(r[0]!.n);
    }

    before(async () => {
      nats = await NatsCluster.start(3);
      db = await createTestDatabase();
      pool = new pg.Pool({ connectionString: db.url, max: 2 });
      pool.on('error', () => {});
      await Promise.all(NODE_IDS.map((_, i) => startNode(i)));
      const tenant = `s${randomUUID().slice(0, 8)}`;
      await ok(call(via(), 'POST', '/api/TenantRecord', admin, { slug: tenant, name: 'Scheduling' }), 201, 'tenant');
      const project = await ok(call(via(), 'POST', '/api/projects/create', admin, { tenant, slug: 'app', name: 'App' }), 201, 'project');
      scoped = { ...admin, 'x-service-tenant': tenant, 'x-service-project': 'app' };
      await ok(call(via(), 'POST', '/api/Schema/entities', scoped, { entityName: 'Mark', fields: [{ name: 'tag', type: 'String', nullable: false }] }), 201, 'entity');
      schema = (await sql<{ schema_name: string }>(`SELECT schema_name FROM plinth.branches WHERE project_id = $1 AND name = 'main'`, [project.id]))[0]!.schema_name;
      await publishJob('tick', 'export default async function (ctx) { return ctx.run.scheduledFor; }\n');
      await publishJob('slow', 'export default async function (ctx) {\n  if (ctx.run.attempt === 1) { const end = Date.now() + 20000; while (Date.now() < end) {} }\n  await ctx.db.marks.create({ tag: "slow-" + ctx.run.attempt });\n  return ctx.run.attempt;\n}\n', ['entity:Mark:*']);
    });

    after(async () => {
      await reapPlinthProcesses();
      await pool?.end().catch(() => {});
      await nats?.stop().catch(() => {});
      await db?.drop().catch(() => {});
    });

    it('a. three nodes on one 1 s interval trigger for 60 s: every scheduledFor has one run', { timeout: 120_000 }, async () => {
      await ensureNodes();
      const id = await definition('everySecond', 'tick', { overlap: 'allow' });
      await ok(call(via(), 'POST', `/api/scheduling/taskdefinition/${id}/triggers`, scoped, { kind: 'interval', intervalSeconds: 1 }), 201, 'trigger');
      await sleep(60_000);
      await ok(call(via(), 'POST', `/api/scheduling/taskdefinition/${id}/pause`, scoped, {}), 200, 'pause');
      const runs = await sql<{ scheduled_for: Date; state: string }>(`SELECT scheduled_for, state FROM plinth.task_runs WHERE definition_id = $1`, [id]);
      const nodesUsed = await sql<{ node: string }>(`SELECT DISTINCT a.node FROM plinth.task_attempts a JOIN plinth.task_runs r ON r.id = a.run_id WHERE r.definition_id = $1`, [id]);
      report(`a. ${runs.length} runs in 60 s, ran on ${nodesUsed.map((n) => n.node).join(', ')}`);
      assert.equal(await duplicateFires(id), 0, 'no scheduledFor has two runs');
      assert.ok(runs.length >= 50, `${runs.length} runs in 60 s of a 1 s interval`);
    });

    it('b. kill -9 of the node running a long attempt: lost, retried once elsewhere, one success', { timeout: 150_000 }, async () => {
      await ensureNodes();
      const id = await definition('slowJob', 'slow', { overlap: 'allow', retry: { maxAttempts: 3, backoffSeconds: 1, maxBackoffSeconds: 1 }, timeoutSeconds: 120 });
      const run = await ok(call(via(), 'POST', `/api/scheduling/taskrun/${id}/trigger`, scoped, {}), 202, 'trigger');
      const first = await until('the first attempt runs', 20_000, async () => (await sql<{ node: string }>(`SELECT node FROM plinth.task_attempts WHERE run_id = $1 AND number = 1`, [run.id]))[0]);
      const victim = NODE_IDS.indexOf(first.node);
      assert.ok(victim >= 0, `attempt 1 ran on ${first.node}`);
      await nodes[victim]!.kill9();
      const t0 = Date.now();
      const done = await until('the run succeeds after the kill', 90_000, async () => {
        const r = (await sql<{ state: string; attempts: number }>(`SELECT state, attempts FROM plinth.task_runs WHERE id = $1`, [run.id]))[0];
        return r?.state === 'succeeded' ? r : null;
      }, 250);
      const attempts = await sql<{ number: number; state: string; node: string }>(`SELECT number, state, node FROM plinth.task_attempts WHERE run_id = $1 ORDER BY number`, [run.id]);
      report(`b. killed ${first.node}; run succeeded ${Date.now() - t0} ms later; attempts ${attempts.map((a) => `${a.number}:${a.state}@${a.node}`).join(' ')}`);
      assert.equal(attempts[0]!.state, 'lost');
      assert.equal(attempts.filter((a) => a.state === 'succeeded').length, 1, 'one successful attempt');
      assert.equal(done.attempts, 2, 'retried once');
      assert.notEqual(attempts[1]!.node, first.node);
      const marks = await sql<{ tag: string }>(`SELECT tag FROM "${schema}"."Mark" WHERE tag LIKE 'slow-%'`);
      assert.deepEqual(marks.map((m) => m.tag), ['slow-2'], 'the write is made once, by the successful attempt');
    });

    it('c. the JetStream meta leader killed while an interval trigger fires: late, never twice', { timeout: 150_000 }, async () => {
      await ensureNodes();
      const id = await definition('throughElection', 'tick', { overlap: 'allow' });
      await ok(call(via(), 'POST', `/api/scheduling/taskdefinition/${id}/triggers`, scoped, { kind: 'interval', intervalSeconds: 1 }), 201, 'trigger');
      await sleep(5_000);
      const leader = await nats.metaLeader();
      assert.notEqual(leader, null, 'a meta leader');
      await nats.kill(leader!);
      const killedAt = Date.now();
      await sleep(20_000);
      nats.startServer(leader!);
      await sleep(5_000);
      await ok(call(via(), 'POST', `/api/scheduling/taskdefinition/${id}/pause`, scoped, {}), 200, 'pause');
      const runs = await sql<{ scheduled_for: Date }>(`SELECT scheduled_for FROM plinth.task_runs WHERE definition_id = $1 ORDER BY scheduled_for`, [id]);
      const after = runs.filter((r) => r.scheduled_for.getTime() > killedAt + 5_000);
      report(`c. killed NATS server ${leader}; ${runs.length} runs over ~30 s, ${after.length} more than 5 s after the kill`);
      assert.equal(await duplicateFires(id), 0, 'no scheduledFor has two runs');
      assert.ok(after.length >= 5, 'fires continue after the election');
    });
  });
});
