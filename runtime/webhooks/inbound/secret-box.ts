import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../../../storage/index.js';
import { projectSigningKey } from '../../identity/keys.js';

/**
 * Receiver signing secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256)
 * from the project's key, with the receiver id as associated data, so a sealed
 * value copied onto another receiver does not open. Stored as
 * `v1.<iv>.<tag>.<ciphertext>` (base64url).
 *
 * Interim: the platform secret store (runtime/secrets/, built with outbound
 * webhooks) should take this over; the sealed format is versioned for that move.
 */
const INFO = 'plinth:webhook-receiver-secret:v1';

async function keyFor(db: SqlExecutor, projectId: string): Promise<Buffer> {
  const ikm = await projectSigningKey(db, projectId);
  return Buffer.from(hkdfSync('sha256', ikm, Buffer.from(projectId), INFO, 32));
}

export async function sealSecret(db: SqlExecutor, projectId: string, receiverId: string, secret: string): Promise<string> {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', await keyFor(db, projectId), iv);
  c.setAAD(Buffer.from(receiverId));
  const ct = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export async function openSecret(db: SqlExecutor, projectId: string, receiverId: string, sealed: string): Promise<string> {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || iv === undefined || tag === undefined || ct === undefined) throw new Error('unknown sealed secret format');
  const d = createDecipheriv('aes-256-gcm', await keyFor(db, projectId), Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(receiverId));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}
