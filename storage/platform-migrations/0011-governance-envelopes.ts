import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 11: governance envelopes. Shipped: never edit it, add a new one. */
export const m0011: Migration = {
  version: 11,
  name: 'governance envelopes',
  statements: [
    // One envelope per project, written only by the project actor; the effective envelope is merged down the ancestry (runtime/governance/).
    `CREATE TABLE ${S}.governance_envelopes (
      project_id uuid PRIMARY KEY REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      envelope jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now())`,
  ],
};
