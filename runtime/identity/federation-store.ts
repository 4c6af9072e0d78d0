/**
 * Rows of identity federation: a project's configured providers (client
 * secret sealed in `secrets`), pending authorization requests (state kept as
 * a hash, single use, 10 min) and the links from a provider's user to a subject.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SqlClient, SqlExecutor } from '../../storage/index.js';
import type { SecretStore } from '../secrets/index.js';

/** How long a started authorization may take before its callback. */
export const FEDERATION_STATE_TTL_SECONDS = 600;

export interface ProviderRow {
  name: string;
  issuer: string;
  client_id: string;
  secret_id: string;
  redirect_uri: string;
  scopes: string;
  created_at: string;
  updated_at: string;
}

const PROVIDER_COLUMNS = 'name, issuer, client_id, secret_id::text AS secret_id, redirect_uri, scopes, created_at, updated_at';

/** The public record of a provider: never the client secret. */
export const providerRecord = (r: ProviderRow) => ({
  name: r.name,
  issuer: r.issuer,
  clientId: r.client_id,
  clientSecretRef: `secret:${r.secret_id}`,
  redirectUri: r.redirect_uri,
  scopes: r.scopes.split(' '),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function readProvider(db: SqlExecutor, projectId: string, name: string): Promise<ProviderRow | undefined> {
  return (await db.query<ProviderRow>(`SELECT ${PROVIDER_COLUMNS} FROM plinth.identity_providers WHERE project_id = $1 AND name = $2`, [projectId, name])).rows[0];
}

export async function listProviders(db: SqlExecutor, projectId: string): Promise<ProviderRow[]> {
  return (await db.query<ProviderRow>(`SELECT ${PROVIDER_COLUMNS} FROM plinth.identity_providers WHERE project_id = $1 ORDER BY name`, [projectId])).rows;
}

export interface ProviderInput { issuer: string; clientId: string; clientSecret: string | null; redirectUri: string; scopes: string[] }

/**
 * Creates or replaces a provider. A new client secret gets a new sealed row
 * and the old one is deleted in the same transaction; without one the stored
 * secret stays (a replace need not resend it). Null when the provider is new
 * and no secret was given.
 */
export async function upsertProvider(db: SqlClient, secrets: SecretStore, projectId: string, name: string, p: ProviderInput): Promise<{ row: ProviderRow; created: boolean } | null> {
  return db.transaction(async (tx) => {
    const prev = (await tx.query<{ secret_id: string }>(
      'SELECT secret_id::text AS secret_id FROM plinth.identity_providers WHERE project_id = $1 AND name = $2 FOR UPDATE', [projectId, name],
    )).rows[0];
    if (prev === undefined && p.clientSecret === null) return null;
    const secretId = p.clientSecret === null ? prev!.secret_id : await secrets.put(tx, projectId, p.clientSecret);
    const row = (await tx.query<ProviderRow>(
      `INSERT INTO plinth.identity_providers (project_id, name, issuer, client_id, secret_id, redirect_uri, scopes)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (project_id, name) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id, secret_id = EXCLUDED.secret_id,
         redirect_uri = EXCLUDED.redirect_uri, scopes = EXCLUDED.scopes, updated_at = now()
       RETURNING ${PROVIDER_COLUMNS}`,
      [projectId, name, p.issuer, p.clientId, secretId, p.redirectUri, p.scopes.join(' ')],
    )).rows[0]!;
    if (prev !== undefined && prev.secret_id !== secretId) await tx.query('DELETE FROM plinth.secrets WHERE id = $1', [prev.secret_id]);
    return { row, created: prev === undefined };
  });
}

/** Deletes a provider and its sealed secret; false when there was none. Links stay (a provider configured again with the same issuer finds its users). */
export async function deleteProvider(db: SqlClient, projectId: string, name: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const gone = (await tx.query<{ secret_id: string }>(
      'DELETE FROM plinth.identity_providers WHERE project_id = $1 AND name = $2 RETURNING secret_id::text AS secret_id', [projectId, name],
    )).rows[0];
    if (gone === undefined) return false;
    await tx.query('DELETE FROM plinth.secrets WHERE id = $1', [gone.secret_id]);
    await tx.query('DELETE FROM plinth.identity_federation_states WHERE project_id = $1 AND provider = $2', [projectId, name]);
    return true;
  });
}

const stateHash = (state: string): string => createHash('sha256').update(state).digest('base64url');

export interface PendingAuthorization { codeVerifier: string; nonce: string; redirectUri: string }

/** Records a started authorization; also sweeps this project's expired ones (the table stays small without a sweeper). */
export async function saveState(db: SqlExecutor, projectId: string, provider: string, state: string, p: PendingAuthorization): Promise<void> {
  await db.query('DELETE FROM plinth.identity_federation_states WHERE expires_at < now() AND project_id = $1', [projectId]);
  await db.query(
    `INSERT INTO plinth.identity_federation_states (state_hash, project_id, provider, code_verifier, nonce, redirect_uri, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + $7::int * interval '1 second')`,
    [stateHash(state), projectId, provider, p.codeVerifier, p.nonce, p.redirectUri, FEDERATION_STATE_TTL_SECONDS],
  );
}

/**
 * Consumes a state: deleted whatever happens next (single use), returned only
 * when it belongs to this project and provider and has not expired. A state of
 * another project or provider is left alone, so it cannot be burnt from there.
 */
export async function takeState(db: SqlExecutor, projectId: string, provider: string, state: string): Promise<PendingAuthorization | null> {
  const row = (await db.query<{ code_verifier: string; nonce: string; redirect_uri: string; live: boolean }>(
    `DELETE FROM plinth.identity_federation_states WHERE state_hash = $1 AND project_id = $2 AND provider = $3
     RETURNING code_verifier, nonce, redirect_uri, expires_at > now() AS live`,
    [stateHash(state), projectId, provider],
  )).rows[0];
  if (row === undefined || !row.live) return null;
  return { codeVerifier: row.code_verifier, nonce: row.nonce, redirectUri: row.redirect_uri };
}

/** Thrown inside the provisioning transaction when a concurrent first login linked the user first. */
class LinkRace extends Error {}

/**
 * Just-in-time provisioning: the subject linked to (issuer, sub), or a new
 * subject (no password, no address of its own) and its link. The e-mail claim
 * is stored on the link and refreshed at each login; it never links by itself.
 * Returns the subject id and whether it may log in (state active).
 */
export async function provisionSubject(db: SqlClient, projectId: string, provider: string, issuer: string, sub: string, email: string | null): Promise<{ subjectId: string; active: boolean }> {
  const find = async () => (await db.query<{ subject_id: string; state: string }>(
    `UPDATE plinth.identity_federated_links l SET email = $4, provider = $5, last_login_at = now()
       FROM plinth.identity_subjects u
      WHERE l.project_id = $1 AND l.issuer = $2 AND l.external_subject = $3 AND u.id = l.subject_id
      RETURNING l.subject_id::text AS subject_id, u.state`,
    [projectId, issuer, sub, email, provider],
  )).rows[0];
  const found = await find();
  if (found !== undefined) return { subjectId: found.subject_id, active: found.state === 'active' };
  try {
    const subjectId = await db.transaction(async (tx) => {
      const id = randomUUID();
      await tx.query('INSERT INTO plinth.identity_subjects (id, project_id, email, password_hash) VALUES ($1, $2, NULL, NULL)', [id, projectId]);
      const linked = await tx.query(
        `INSERT INTO plinth.identity_federated_links (project_id, issuer, external_subject, subject_id, provider, email)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (project_id, issuer, external_subject) DO NOTHING RETURNING subject_id`,
        [projectId, issuer, sub, id, provider, email],
      );
      if (linked.rows.length === 0) throw new LinkRace();
      return id;
    });
    return { subjectId, active: true };
  } catch (err) {
    if (!(err instanceof LinkRace)) throw err;
    const raced = await find();
    if (raced === undefined) throw new Error('federated link vanished after a concurrent insert');
    return { subjectId: raced.subject_id, active: raced.state === 'active' };
  }
}
