import pg from 'pg';
import { call, expectStatus as expect } from '../http-call.js';
import { ENTITY_NAME, ENTITY_PATH, ORDER_FIELDS, SEED_PREFIX, makeOrder, qualifiedTable } from './order-model.js';
import { grantPolicyRead } from './policy.js';

/** One bootstrapped project: the admin's headers, the granted users' credentials, and the seeded ids. */
export interface Fixture {
  tenantSlug: string;
  projectSlug: string;
  projectId: string;
  scopeHeaders: Record<string, string>;
  adminToken: string;
  user: Credentials;
  /** The granted user's subject (W4/G4 grant it Shipment read). */
  userSubjectId: string;
  /** The user of W1P/W2P (owns every seeded row; read grant with row filter and field mask), or null when skipped. */
  policyUser: (Credentials & { subjectId: string }) | null;
  /** Why W1P/W2P are skipped (null when they run). */
  policySkipReason: string | null;
  ids: string[];
}

export interface Credentials { email: string; password: string }

const SEED_BATCH = 1000;

/**
 * Tenant, project, the Order entity, two registered users, `rows` seeded orders (batch route,
 * 1,000 per request) all owned by the policy user, the plain user's `entity:Order:read` and
 * `entity:Order:insert`, and the policy user's `read` with a row filter and a field mask.
 * Grants go to subjects, not to the role `authenticated`: grants combine as a union, so a
 * role-wide read without a filter would lift the policy user's filter.
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

  const register = async (tag: string): Promise<Credentials & { subjectId: string }> => {
    const creds = { email: `bench-${tag}-${Math.random().toString(36).slice(2, 8)}@example.com`, password: 'bench correct horse battery' };
    const r = await call('POST', `${url}/api/identity/register`, scopeHeaders, creds);
    expect(`register ${tag}`, r, 201);
    return { ...creds, subjectId: (r.body as { data: { subjectId: string } }).data.subjectId };
  };
  const user = await register('user');
  const policy = await register('policy');

  const ids: string[] = [];
  for (let start = 0; start < rows; start += SEED_BATCH) {
    const items = Array.from({ length: Math.min(SEED_BATCH, rows - start) }, (_, k) => makeOrder(start + k, SEED_PREFIX, policy.subjectId));
    const a = await call('POST', `${url}/api/${ENTITY_PATH}/batch`, adminScoped, { items });
    expect(`seed batch at ${start}`, a, 201);
    for (const r of (a.body as { data: Array<{ id: string }> }).data) ids.push(r.id);
  }

  for (const grant of ['entity:Order:read', 'entity:Order:insert']) {
    expect(`grant ${grant}`, await call('POST', `${url}/api/projects/${projectId}/capability-grants`, adminScoped, { subjectId: user.subjectId, grant }), 201);
  }
  const policySkipReason = await grantPolicyRead(url, adminScoped, projectId, policy.subjectId);
  return {
    tenantSlug, projectSlug, projectId, scopeHeaders, adminToken, user: { email: user.email, password: user.password }, userSubjectId: user.subjectId,
    policyUser: policySkipReason === null ? policy : null, policySkipReason, ids,
  };
}

/** A fresh access token for the fixture's user, or `who` (tokens live 15 minutes; each segment logs in again). */
export async function userToken(url: string, f: Fixture, who: Credentials = f.user): Promise<string> {
  const a = await call('POST', `${url}/api/identity/login`, f.scopeHeaders, { email: who.email, password: who.password });
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
