import type { Client } from './client.js';
import { expectStatus } from './expect.js';

/** Creates a project API key as `admin` and reveals its secret. */
export async function createKey(admin: Client, projectId: string, body: unknown): Promise<{ id: string; secret: string; revealTokenId: string }> {
  const r = await admin.post(`/api/projects/${projectId}/api-keys`, body);
  expectStatus(r, 201);
  const { id, revealTokenId } = r.body.data;
  const shown = await admin.with({ tenant: undefined, project: undefined }).post(`/api/CredentialReveal/${revealTokenId}/reveal`);
  expectStatus(shown, 200);
  return { id, secret: shown.body.data.secret, revealTokenId };
}
