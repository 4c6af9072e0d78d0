import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 24: who drives an in-flight deployment, until when (docs/proposals-and-deployments.md "Recovery"). Shipped: never edit it, add a new one. */
export const m0024: Migration = {
  version: 24,
  name: 'deployment driver lease',
  // `driver` is `<nodeId>/<incarnation>` of the node running the deployment's steps; it renews
  // `lease_expires_at` (database clock) while it waits. Another node may take an in-flight
  // deployment over only once the lease has expired (or its holder is an earlier life of
  // itself), checked in the same UPDATE that ends it. `ended_by` says who ended it when it
  // was not its own driver or a rollback request ('recovery'). Rows from before this
  // migration have no driver: recovery treats them as orphaned.
  statements: [
    `ALTER TABLE ${S}.deployments ADD COLUMN driver text NULL`,
    `ALTER TABLE ${S}.deployments ADD COLUMN lease_expires_at timestamptz NULL`,
    `ALTER TABLE ${S}.deployments ADD COLUMN ended_by text NULL`,
  ],
};
