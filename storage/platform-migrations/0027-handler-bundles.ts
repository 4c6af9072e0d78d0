import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/**
 * Platform migration 27: compiled handler bundles (CONTRACT "Handlers", docs/authored-code.md).
 * A publication pins each handler to a bundle by its sha256; the bundle is immutable and
 * content-addressed per project, so branches, proposals, deployments and rollbacks share rows
 * and never copy them. Shipped: never edit it, add a new one.
 */
export const m0027: Migration = {
  version: 27,
  name: 'handler bundles',
  statements: [
    `CREATE TABLE ${S}.handler_bundles (
      project_id uuid NOT NULL,
      sha256 text NOT NULL,
      code text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, sha256))`,
  ],
};
