import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 7: API keys. Shipped: never edit it, add a new one. */
export const m0007: Migration = {
  version: 7,
  name: 'API keys',
  // Only sha256(secret) is kept (the secret has 256 random bits, so a plain digest is enough).
  // The generated secret is also sealed once into `secrets` (reveal_once) for its one-time
  // CredentialReveal; the reveal deletes that copy (runtime/secrets), and so does deleting the key.
  statements: [
    `CREATE TABLE ${S}.api_keys (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects (id) ON DELETE CASCADE,
      name text NOT NULL,
      secret_hash text NOT NULL,
      grants jsonb NOT NULL,
      scopes jsonb NULL,
      reveal_secret_id uuid NULL REFERENCES ${S}.secrets (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX api_keys_project_idx ON ${S}.api_keys (project_id, created_at)`,
    `ALTER TABLE ${S}.secrets ADD COLUMN reveal_once boolean NOT NULL DEFAULT false`,
  ],
};
