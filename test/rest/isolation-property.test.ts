/**
 * Isolation property test (issue 10): ≥ 500 generated requests over 2 tenants
 * × 2 projects × 2 users — random routes, credentials of any project (user
 * tokens and API keys), scope headers of any project by slug or id, ids of
 * rows and events of any project — must produce 0 cross-scope reads or
 * writes and no 5xx. Reads are caught by the marker values of other scopes in
 * an answer; writes by checking each successful write's rows and, at the end,
 * every project's rows against the state the successful writes imply.
 *
 * Seed: ISOLATION_SEED (printed every run); request count: ISOLATION_REQUESTS.
 * User-level isolation inside a project: see USER_ISOLATION in isolation/fixture.ts.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';
import { buildWorld, USER_ISOLATION, type World } from './isolation/fixture.js';
import { prng, RequestGenerator, type GeneratedRequest } from './isolation/generate.js';
import { compareProject, judge, Tally, type Outcome } from './isolation/oracle.js';

const REQUESTS = Number(process.env.ISOLATION_REQUESTS ?? 1000);
const SEED = Number(process.env.ISOLATION_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** How long a tail stream is read before the client goes away. */
const TAIL_READ_MS = 300;

/** Sends one request; an SSE tail is read for TAIL_READ_MS, then abandoned. */
async function send(baseUrl: string, req: GeneratedRequest): Promise<Outcome> {
  const headers: Record<string, string> = { ...req.headers };
  let body: string | undefined;
  if (req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  const abort = new AbortController();
  const res = await fetch(baseUrl + req.path, { method: req.method, headers, signal: abort.signal, ...(body === undefined ? {} : { body }) });
  let text = '';
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const timer = setTimeout(() => abort.abort(), TAIL_READ_MS);
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch {
      // The abort ends the stream: expected.
    } finally {
      clearTimeout(timer);
    }
    return { status: res.status, text, data: undefined };
  }
  text = await res.text();
  let data: unknown;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') data = (JSON.parse(text) as { data?: unknown }).data;
  return { status: res.status, text, data };
}

/** Every row of one entity in one project, as the admin, following cursors. */
async function allRows(world: World, project: number, entity: string): Promise<Record<string, unknown>[]> {
  const admin = world.projects[project]!.admin;
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const r = await admin.get(`/api/${entity}?pageSize=100${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expectStatus(r, 200);
    out.push(...r.body.data);
    cursor = r.body.page?.next;
    if (cursor === undefined || cursor === null) return out;
  }
  throw new Error('cursor paging did not end');
}

function report(backend: string, tally: Tally, ms: number): void {
  const statuses = [...tally.byStatus].sort().map(([s, n]) => `${s}=${n}`).join(' ');
  const kinds = [...tally.byKind].sort().map(([k, v]) => `${k} ${v.ok}/${v.total}`).join(', ');
  console.log([
    `isolation property [${backend}]: seed=${SEED} (ISOLATION_SEED to replay) requests=${tally.total} in ${ms} ms, user isolation ${USER_ISOLATION ? 'ON' : 'OFF'}`,
    `  outcomes: ${statuses}`,
    `  mismatched credential/scope: ${tally.mismatchedScope}, in scope with foreign ids: ${tally.foreignIdsInScope}, in-scope successes: ${tally.inScopeSuccess}`,
    `  per route (2xx/total): ${kinds}`,
    `  cross-scope violations: ${tally.violations.length}`,
    ...tally.violations.slice(0, 20).map((v) => `    ${v}`),
  ].join('\n'));
}

forEachBackend('isolation property: no request reads or writes outside its scope', (backend) => {
  let server: TestServer;
  let world: World;

  before(async () => {
    server = await startServer({ backend });
    world = await buildWorld(server.url, server.adminToken);
  });
  after(async () => {
    await server?.close();
  });

  it(`${REQUESTS} generated requests: 0 cross-scope reads or writes, no 5xx`, async () => {
    const started = Date.now();
    const gen = new RequestGenerator(world, prng(SEED));
    const tally = new Tally();
    for (let i = 0; i < REQUESTS; i++) {
      const req = gen.next();
      judge(world, tally, req, await send(server.url, req));
    }
    // The end state: every project's rows are exactly what its own successful writes made them.
    for (const p of world.projects) {
      for (const entity of ['notes', 'folders'] as const) {
        for (const d of compareProject(world, p.index, entity, await allRows(world, p.index, entity))) tally.violations.push(`end state: ${d}`);
      }
    }
    report(backend, tally, Date.now() - started);

    assert.ok(tally.total >= 500, 'at least 500 requests');
    // Not vacuous: many requests crossed scopes, and many in-scope ones really succeeded.
    assert.ok(tally.mismatchedScope >= 100, `only ${tally.mismatchedScope} requests with a mismatched credential/scope`);
    assert.ok(tally.foreignIdsInScope >= 50, `only ${tally.foreignIdsInScope} in-scope requests with ids of other projects`);
    assert.ok(tally.inScopeSuccess >= 100, `only ${tally.inScopeSuccess} in-scope successes: the world is not exercised`);
    assert.equal(tally.serverErrors, 0, 'no 5xx');
    assert.deepEqual(tally.violations, [], `seed ${SEED}: ${tally.violations.length} cross-scope violations`);
  });
});
