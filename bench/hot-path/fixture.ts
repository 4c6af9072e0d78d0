import pg from 'pg';
import { call, expectStatus as expect } from '../http-call.js';
import { ENTITY_NAME, ENTITY_PATH, ORDER_FIELDS, SEED_PREFIX, makeOrder, qualifiedTable } from './order-model.js';

/** One bootstrapped project: the admin's headers, a granted user's credentials, and the seeded ids. */
export interface Fixture {
  tenantSlug: string;
  projectSlug: string;
  projectId: string;
  scopeHeaders: Record<string, string>;
  adminToken: string;
  user: { email: string; password: string };
  ids: string[];
}

const SEED_BATCH = 1000;

/**
 * Tenant, project, the Order entity, `rows` seeded orders (batch route, 1,000 per request),
 * and a registered user whose role holds `entity:Order:read` and `entity:Order:insert`.
 */
export async function bootstrap(url: string, adminToken: string, rows: number): Promise<Fixture> {
  const admin = { authorization: `Bearer ${adminToken}` };
  const tenantSlug = `bench-${Math.random().toString(36).slice(2, 8)}`;
  const projectSlug = 'shop';
  expect('tenant', await call('POST', `${url}/api/TenantRecord`, admin, { slug: tenantSlug, name: 'Bench' }), 201);
  const p = await call('POST', `${url}/api/projects/create`, admin, { tenant: tenantSlug, slug: projectSlug, name: 'Shop' });
  expect('project', p, 201);
  const projectId = (p.body as { data: { id: string } }).data.id;
  const scopeHeaders = { 'x-service-tenant': tenantSlug, 'x-service-project': projectSlug };
  const adminScoped = { ...admin, ...scopeHeaders };
  expect('entity', await call('POST', `${url}/api/Schema/entities`, adminScoped, { entityName: ENTITY_NAME, fields: ORDER_FIELDS }), 201);

  const ids: string[] = [];
  for (let start = 0; start < rows; start += SEED_BATCH) {
    const items = Array.from({ length: Math.min(SEED_BATCH, rows - start) }, (_, k) => makeOrder(start + k, SEED_PREFIX));
    const a = await call('POST', `${url}/api/${ENTITY_PATH}/batch`, adminScoped, { items });
    expect(`seed batch at ${start}`, a, 201);
    for (const r of (a.body as { data: Array<{ id: string }> }).data) ids.push(r.id);
  }

  for (const grant of ['entity:Order:read', 'entity:Order:insert']) {
    expect(`grant ${grant}`, await call('POST', `${url}/api/projects/${projectId}/capability-grants`, adminScoped, { role: 'authenticated', grant }), 201);
  }
  const user = { email: `bench-${Math.random().toString(36).slice(2, 8)}@example.com`, password: 'bench correct horse battery' };
  expect('register', await call('POST', `${url}/api/identity/register`, scopeHeaders, user), 201);
  return { tenantSlug, projectSlug, projectId, scopeHeaders, adminToken, user, ids };
}

/** A fresh access token for the fixture's user (tokens live 15 minutes; each segment logs in again). */
export async function userToken(url: string, f: Fixture): Promise<string> {
  const a = await call('POST', `${url}/api/identity/login`, f.scopeHeaders, f.user);
  expect('login', a, 200);
  // Builds before the CONTRACT fix answered under `data` (BENCH_PREVIOUS_SERVER may be one).
  const body = a.body as { accessToken?: string; data?: { accessToken?: string } };
  const token = body.accessToken ?? body.data?.accessToken;
  if (typeof token !== 'string') throw new Error(`login: no accessToken in ${a.text.slice(0, 200)}`);
  return token;
}

/**
 * Batch inserts stamp 1,000 rows with one `createdAt`; a real table's timestamps are spread.
 * Spread them one second apart (in id order, so nothing else is correlated) so `-createdAt`
 * sorts have no artificial ties, then VACUUM ANALYZE.
 */
export async function spreadCreatedAt(databaseUrl: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t = qualifiedTable(schema);
    await c.query(
      `UPDATE ${t} o SET "createdAt" = now() - make_interval(secs => s.n) FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM ${t}) s WHERE o.id = s.id`,
    );
    await c.query(`VACUUM ANALYZE ${t}`);
  } finally {
    await c.end();
  }
}

/** Removes the rows the create workload added, then refreshes planner statistics; returns the count removed. */
export async function resetTable(databaseUrl: string, schema: string, createdPrefix: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t = qualifiedTable(schema);
    const r = await c.query(`DELETE FROM ${t} WHERE "customerName" LIKE $1`, [`${createdPrefix}%`]);
    await c.query(`VACUUM ANALYZE ${t}`);
    return r.rowCount ?? 0;
  } finally {
    await c.end();
  }
}
