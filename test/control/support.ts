/** Shared helpers of the control-plane tests (versioning, records, discovery). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, type Reply } from '../support/client.js';
import { expectStatus } from '../support/expect.js';

export const newSlug = (prefix = 't'): string => `${prefix}${randomUUID().slice(0, 8)}`;

/** A new tenant with project `app`, created through node A: the admin scoped to it on A and on B (cluster tests). */
export async function projectOnTwoNodes(urlA: string, urlB: string, token: string): Promise<{ onA: Client; onB: Client }> {
  const tenant = newSlug();
  const adminA = new Client(urlA, { token });
  expectStatus(await adminA.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
  expectStatus(await adminA.post('/api/projects/create', { tenant, slug: 'app', name: 'App' }), 201);
  return { onA: adminA.with({ tenant, project: 'app' }), onB: new Client(urlB, { token, tenant, project: 'app' }) };
}

/** Asserts the control-plane envelope `{ surface, state, correlationId, data }` and returns `data`. */
export function controlData(r: Reply, status: number, surface?: string, state?: string): any {
  expectStatus(r, status);
  assert.deepEqual(Object.keys(r.body).sort(), ['correlationId', 'data', 'state', 'surface']);
  if (surface !== undefined) assert.equal(r.body.surface, surface);
  if (state !== undefined) assert.equal(r.body.state, state);
  assert.equal(r.body.correlationId, r.headers.get('x-service-correlation-id'));
  return r.body.data;
}

/** Registers a user of the client's project (holding nothing) and returns its access token. */
export async function projectUserToken(scoped: Client): Promise<string> {
  const anon = scoped.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
  const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
  expectStatus(login, 200);
  return login.body.accessToken;
}

/** Polls `GET /api/deployments/{id}` until its state is one of `states` (bounded) and returns the record. */
export async function untilDeployment(c: Client, id: string, states: string[], deadlineMs = 15_000): Promise<any> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const d = controlData(await c.get(`/api/deployments/${id}`), 200, 'Deployment', 'read');
    if (states.includes(d.state)) return d;
    if (Date.now() > end) assert.fail(`deployment stayed ${d.state}, wanted ${states.join('|')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
