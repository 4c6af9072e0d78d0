import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 2: identity and grants. Shipped: never edit it, add a new one. */
export const m0002: Migration = {
  version: 2,
  name: 'identity and grants',
  statements: [
    `CREATE TABLE ${S}.project_keys (
      project_id uuid PRIMARY KEY REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      signing_key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.identity_subjects (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      email text NOT NULL,
      password_hash text NOT NULL,
      state text NOT NULL DEFAULT 'active',
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (project_id, email))`,
    `CREATE TABLE ${S}.identity_sessions (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
      refresh_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_refreshed_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz NULL)`,
    `CREATE INDEX identity_sessions_subject_idx ON ${S}.identity_sessions (project_id, subject_id)`,
    `CREATE TABLE ${S}.capability_grants (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      subject_id uuid NULL,
      role text NULL,
      grant_text text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((subject_id IS NULL) <> (role IS NULL)))`,
    `CREATE INDEX capability_grants_project_idx ON ${S}.capability_grants (project_id)`,
  ],
};
