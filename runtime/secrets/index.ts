import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;
const KEY_NAME = 'secrets-master-key';
/** How long a one-time reveal token stays valid. */
export const REVEAL_TTL_MS = 15 * 60_000;

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>` (base64url parts). */
export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function open(key: Buffer, sealed: string, aad: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || iv === undefined || tag === undefined || ct === undefined) throw new Error('unknown sealed secret format');
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}

/** A fresh platform-generated signing secret (`whsec_` + 32 random bytes, base64url). */
export const generateSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * Secrets stored encrypted in `secrets` and only ever referenced by id
 * (`signingSecretRef`). The key comes from SERVICE_SECRETS_KEY or, when that
 * is unset, a key generated once and stored in the platform database (see
 * docs/webhooks.md for the trade-off). The secret id is bound into the GCM
 * additional data, so a sealed value cannot be moved to another id.
 */
export class SecretStore {
  private constructor(private readonly key: Buffer) {}

  static async open(db: SqlClient, envKey: Buffer | null): Promise<SecretStore> {
    if (envKey !== null) return new SecretStore(envKey);
    await db.query(`INSERT INTO ${S}.platform_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [KEY_NAME, randomBytes(32).toString('base64')]);
    const row = (await db.query<{ value: string }>(`SELECT value FROM ${S}.platform_keys WHERE name = $1`, [KEY_NAME])).rows[0];
    if (row === undefined) throw new Error('secrets key missing');
    return new SecretStore(Buffer.from(row.value, 'base64'));
  }

  async put(tx: SqlExecutor, projectId: string | null, secret: string): Promise<string> {
    const id = randomUUID();
    await tx.query(`INSERT INTO ${S}.secrets (id, project_id, sealed) VALUES ($1, $2, $3)`, [id, projectId, seal(this.key, secret, id)]);
    return id;
  }

  /**
   * Stores a secret that exists only to be revealed once (an API key secret:
   * the platform keeps just its hash). `reveal` deletes it as it is read.
   */
  async putRevealOnce(tx: SqlExecutor, projectId: string | null, secret: string): Promise<string> {
    const id = randomUUID();
    await tx.query(`INSERT INTO ${S}.secrets (id, project_id, sealed, reveal_once) VALUES ($1, $2, $3, true)`, [id, projectId, seal(this.key, secret, id)]);
    return id;
  }

  async get(db: SqlExecutor, id: string): Promise<string | null> {
    const row = (await db.query<{ sealed: string }>(`SELECT sealed FROM ${S}.secrets WHERE id = $1`, [id])).rows[0];
    return row === undefined ? null : open(this.key, row.sealed, id);
  }

  /** Opens a sealed value read by the caller's own query (`secrets.sealed` of row `id`), saving a round trip. */
  unseal(id: string, sealed: string): string {
    return open(this.key, sealed, id);
  }

  /** A one-time reveal token for a platform-generated secret. */
  async revealToken(tx: SqlExecutor, secretId: string): Promise<string> {
    const id = randomUUID();
    await tx.query(`INSERT INTO ${S}.credential_reveals (id, secret_id, expires_at) VALUES ($1, $2, now() + ($3::int * interval '1 millisecond'))`, [id, secretId, REVEAL_TTL_MS]);
    return id;
  }

  /** Consumes a reveal token: the secret the first time, null afterwards (or when expired/unknown). */
  async reveal(db: SqlExecutor, tokenId: string): Promise<string | null> {
    const row = (await db.query<{ secret_id: string; live: boolean }>(
      `DELETE FROM ${S}.credential_reveals WHERE id = $1 RETURNING secret_id, expires_at > now() AS live`, [tokenId],
    )).rows[0];
    if (row === undefined || !row.live) return null;
    const secret = await this.get(db, row.secret_id);
    // A reveal-once secret has served its only purpose: drop the sealed copy.
    await db.query(`DELETE FROM ${S}.secrets WHERE id = $1 AND reveal_once`, [row.secret_id]);
    return secret;
  }
}
