import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 9: identity management: subject claims, deactivation time, listing index. Shipped: never edit it, add a new one. */
export const m0009: Migration = {
  version: 9,
  name: 'identity management: subject claims, deactivation time, listing index',
  statements: [
    // Claims are carried in access tokens issued afterwards (runtime/identity/claims.ts bounds them).
    `ALTER TABLE ${S}.identity_subjects ADD COLUMN claims jsonb NOT NULL DEFAULT '{}'::jsonb`,
    `ALTER TABLE ${S}.identity_subjects ADD COLUMN deactivated_at timestamptz NULL`,
    // GET /api/IdentityManagement/subjects pages a project's subjects in (created_at, id) order.
    `CREATE INDEX identity_subjects_listing_idx ON ${S}.identity_subjects (project_id, created_at, id)`,
  ],
};
