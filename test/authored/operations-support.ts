/** Helpers of the authored-operation suites: declaring a handler through the real routes, a project user holding given grants. */
import { randomUUID } from 'node:crypto';
import type { Client } from '../support/client.js';
import { expectStatus, type Json } from '../support/expect.js';

export interface HandlerDecl {
  name: string;
  surface: 'CoreHandler' | 'EdgeHandler' | 'ManagementHandler';
  /** The module's text: `export default async function (ctx, input) { … }`. */
  source: string;
  operation?: Json;
  grants?: string[];
}

/** Declares a handler as a user would (CONTRACT "Handlers"): its source as a source asset, then `POST /api/Schema/handlers` → 201. */
export async function declareHandler(admin: Client, d: HandlerDecl): Promise<void> {
  const path = `handlers/${d.name}.js`;
  expectStatus(await admin.post('/api/SourceAsset/file', { path, content: d.source, contentType: 'text/javascript' }), 201);
  const body: Json = { name: d.name, surface: d.surface, source: path };
  if (d.operation !== undefined) body.operation = d.operation;
  if (d.grants !== undefined) body.grants = d.grants;
  expectStatus(await admin.post('/api/Schema/handlers', body), 201);
}

/** A new user of the admin's project holding exactly `grants` (subject grants, with their policy parts); its client and subjectId. */
export async function userWith(admin: Client, projectId: string, grants: Json[]): Promise<{ client: Client; subjectId: string }> {
  const anon = admin.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
  const first = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
  expectStatus(first, 200);
  const me = await anon.with({ token: first.body.accessToken }).get('/api/identity/me');
  const subjectId: string = me.body.data.subjectId;
  for (const g of grants) expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { subjectId, ...g }), 201);
  return { client: anon.with({ token: first.body.accessToken }), subjectId };
}
