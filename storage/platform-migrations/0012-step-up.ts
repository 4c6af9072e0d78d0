import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 12: step-up: TOTP factors, WebAuthn credentials, challenges. Shipped: never edit it, add a new one. */
export const m0012: Migration = {
  version: 12,
  name: 'step-up: TOTP factors, WebAuthn credentials, challenges',
  statements: [
    // One TOTP factor per subject. The secrets are sealed in `secrets` (runtime/secrets); a
    // re-enrolment waits in pending_secret_id until its first code confirms it.
    `CREATE TABLE ${S}.identity_totp_factors (
      subject_id uuid PRIMARY KEY REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      secret_id uuid NULL,
      pending_secret_id uuid NULL,
      last_used_step bigint NULL,
      confirmed_at timestamptz NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.identity_webauthn_credentials (
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      credential_id text NOT NULL,
      subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
      public_key text NOT NULL,
      sign_count bigint NOT NULL DEFAULT 0,
      transports jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz NULL,
      PRIMARY KEY (project_id, credential_id))`,
    `CREATE INDEX identity_webauthn_credentials_subject_idx ON ${S}.identity_webauthn_credentials (subject_id)`,
    // Step-up challenges and pending WebAuthn registrations (purpose). attempts counts every
    // proof tried, claimed before the proof is checked, so concurrent guesses cannot exceed the limit.
    `CREATE TABLE ${S}.identity_challenges (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
      purpose text NOT NULL,
      require_strength text NULL,
      reason text NULL,
      started_session_id uuid NULL,
      webauthn_challenge text NULL,
      attempts int NOT NULL DEFAULT 0,
      state text NOT NULL DEFAULT 'pending',
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      completed_at timestamptz NULL)`,
    `CREATE INDEX identity_challenges_expires_idx ON ${S}.identity_challenges (expires_at)`,
  ],
};
