import { randomUUID } from 'node:crypto';
import type { Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';

/** Registers a user, grants it `entity:<entity>:read` in the project and answers its access token. */
export async function registerReader(p: { client: Client; projectId: string }, entity = 'Order'): Promise<string> {
  const anon = p.client.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
  const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
  expectStatus(login, 200);
  const token = login.body.accessToken as string;
  const me = await anon.with({ token }).get('/api/identity/me');
  expectStatus(await p.client.post(`/api/projects/${p.projectId}/capability-grants`, { subjectId: me.body.data.subjectId, grant: `entity:${entity}:read` }), 201);
  return token;
}
