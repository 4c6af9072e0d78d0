import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/**
 * Platform migration 28: the egress allow-list of authored code (CONTRACT "Sandbox and limits",
 * docs/authored-code.md "Egress"). One row per project, not per branch: which outside hosts the
 * project's code may reach is an operator's security setting, like webhook endpoints and secrets,
 * and it must not change when code moves through branches, proposals or a rollback. No row: an
 * empty list (no egress). Shipped: never edit it, add a new one.
 */
export const m0028: Migration = {
  version: 28,
  name: 'authored egress allow-list',
  statements: [
    `CREATE TABLE ${S}.authored_egress (
      project_id uuid PRIMARY KEY REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      allowed_hosts jsonb NOT NULL DEFAULT '[]'::jsonb,
      updated_at timestamptz NOT NULL DEFAULT now())`,
  ],
};
