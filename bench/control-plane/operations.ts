/**
 * The control-plane operations the control-plane bench times, each through the HTTP API as
 * the platform admin: create a branch of the project, add a nullable field to `Order` on it,
 * and turn that into a proposal that is created, approved and merged into main. Plus the
 * one SQL look the bench takes: whether main's table file changed across the merge (a
 * rewrite gets a new relfilenode; a metadata-only ADD COLUMN keeps it).
 */
import pg from 'pg';
import { call, expectStatus } from '../http-call.js';
import type { Fixture } from '../hot-path/fixture.js';
import { ENTITY_NAME, ORDER_FIELDS, qualifiedTable } from '../hot-path/order-model.js';

/** Admin bearer plus the project's scope headers (and a branch, when given). */
function adminHeaders(f: Fixture, branch?: string): Record<string, string> {
  return { authorization: `Bearer ${f.adminToken}`, ...f.scopeHeaders, ...(branch === undefined ? {} : { 'x-service-branch': branch }) };
}

function controlData(what: string, answer: { status: number; body: unknown; text: string }, status: number): Record<string, unknown> {
  expectStatus(what, answer, status);
  const data = (answer.body as { data?: Record<string, unknown> } | undefined)?.data;
  if (data === undefined) throw new Error(`${what}: no data in ${answer.text.slice(0, 300)}`);
  return data;
}

/** `POST /api/branches { name }` off main; resolves with the call's wall time in seconds. */
export async function createBranch(url: string, f: Fixture, name: string): Promise<number> {
  const t0 = performance.now();
  controlData(`create branch ${name}`, await call('POST', `${url}/api/branches`, adminHeaders(f), { name }), 201);
  return (performance.now() - t0) / 1000;
}

export async function deleteBranch(url: string, f: Fixture, name: string): Promise<void> {
  expectStatus(`delete branch ${name}`, await call('DELETE', `${url}/api/branches/${name}`, adminHeaders(f)), 204);
}

/**
 * Adds the nullable String field `field` to Order on `branch` (a direct schema change there).
 * `earlier`: the fields earlier rounds merged into main (an alter takes the whole definition).
 */
export async function addFieldOnBranch(url: string, f: Fixture, branch: string, earlier: string[], field: string): Promise<void> {
  const added = [...earlier, field].map((name) => ({ name, type: 'String', nullable: true }));
  const definition = { entityName: ENTITY_NAME, fields: [...ORDER_FIELDS, ...added] };
  expectStatus(`add ${field} on ${branch}`, await call('PUT', `${url}/api/Schema/entities`, adminHeaders(f, branch), definition), 200);
}

/** What a proposal round took: the three calls' wall times (seconds) and the merge's publication. */
export interface MergeTiming {
  createS: number;
  approveS: number;
  mergeS: number;
  publicationVersion: number;
}

/** Proposal `head` → main: create, approve (admin), merge; checks the diff is the one field add before merging. */
export async function proposeAndMerge(url: string, f: Fixture, head: string, field: string): Promise<MergeTiming> {
  const h = adminHeaders(f);
  let t0 = performance.now();
  const p = controlData('create proposal', await call('POST', `${url}/api/proposals`, h, { title: `add ${field}`, base: 'main', head }), 201);
  const createS = (performance.now() - t0) / 1000;
  const id = String(p.id);
  const full = controlData('read proposal', await call('GET', `${url}/api/proposals/${id}`, h), 200);
  const expected = [{ op: 'alterEntity', entityName: ENTITY_NAME, fields: [{ op: 'addField', field }] }];
  if (JSON.stringify(full.diff) !== JSON.stringify(expected)) throw new Error(`proposal diff is not one field add: ${JSON.stringify(full.diff)}`);
  t0 = performance.now();
  controlData('approve proposal', await call('POST', `${url}/api/proposals/${id}/approve`, h, {}), 200);
  const approveS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const merged = controlData('merge proposal', await call('POST', `${url}/api/proposals/${id}/merge`, h, {}), 200);
  const mergeS = (performance.now() - t0) / 1000;
  if (merged.state !== 'merged') throw new Error(`merge answered state ${String(merged.state)}`);
  return { createS, approveS, mergeS, publicationVersion: Number(merged.publicationVersion) };
}

/** Main's Order table on disk: its file node (a rewrite changes it), size and column count. */
export interface TableFile { relfilenode: number; bytes: number; columns: number }

export async function tableFile(databaseUrl: string, schema: string): Promise<TableFile> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t = qualifiedTable(schema);
    const r = await c.query<{ relfilenode: number; bytes: string; columns: number }>(
      `SELECT c.relfilenode, pg_relation_size(c.oid)::text AS bytes,
              (SELECT count(*)::int FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
         FROM pg_class c WHERE c.oid = $1::regclass`,
      [t],
    );
    const row = r.rows[0]!;
    return { relfilenode: Number(row.relfilenode), bytes: Number(row.bytes), columns: row.columns };
  } finally {
    await c.end();
  }
}
