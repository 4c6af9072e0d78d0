import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 8: identity federation (OIDC). Shipped: never edit it, add a new one. */
export const m0008: Migration = {
  version: 8,
  name: 'identity federation (OIDC)',
  // A federated subject has no password and no address of its own: its e-mail claim lives on
  // its link, so it never takes (or is linked through) a password account's address.
  statements: [
    `ALTER TABLE ${S}.identity_subjects ALTER COLUMN password_hash DROP NOT NULL`,
    `ALTER TABLE ${S}.identity_subjects ALTER COLUMN email DROP NOT NULL`,
    `CREATE TABLE ${S}.identity_providers (
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      issuer text NOT NULL,
      client_id text NOT NULL,
      secret_id uuid NOT NULL REFERENCES ${S}.secrets (id),
      redirect_uri text NOT NULL,
      scopes text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, name))`,
    // Pending authorization requests; the state itself is kept only as a hash.
    `CREATE TABLE ${S}.identity_federation_states (
      state_hash text PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      provider text NOT NULL,
      code_verifier text NOT NULL,
      nonce text NOT NULL,
      redirect_uri text NOT NULL,
      expires_at timestamptz NOT NULL)`,
    `CREATE INDEX identity_federation_states_expires_idx ON ${S}.identity_federation_states (expires_at)`,
    // A provider's user is (issuer, sub): OIDC Core makes that pair, not the e-mail, the stable identifier.
    `CREATE TABLE ${S}.identity_federated_links (
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      issuer text NOT NULL,
      external_subject text NOT NULL,
      subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
      provider text NOT NULL,
      email text NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_login_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, issuer, external_subject))`,
    `CREATE INDEX identity_federated_links_subject_idx ON ${S}.identity_federated_links (subject_id)`,
  ],
};
