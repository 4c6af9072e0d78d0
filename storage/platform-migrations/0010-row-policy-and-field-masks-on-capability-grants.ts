import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 10: row policy and field masks on capability grants. Shipped: never edit it, add a new one. */
export const m0010: Migration = {
  version: 10,
  name: 'row policy and field masks on capability grants',
  statements: [
    // Kept as the JSON text the admin sent (the record echoes it exactly); NULL when the grant has no such part.
    `ALTER TABLE ${S}.capability_grants ADD COLUMN row_filter text NULL`,
    `ALTER TABLE ${S}.capability_grants ADD COLUMN check_filter text NULL`,
    `ALTER TABLE ${S}.capability_grants ADD COLUMN fields text NULL`,
  ],
};
