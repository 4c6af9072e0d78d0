import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 14: hot path: outbox without a second unique index on event_id. Shipped: never edit it, add a new one. */
export const m0014: Migration = {
  version: 14,
  name: 'hot path: outbox without a second unique index on event_id',
  // Every create writes one outbox row; its random event_id made each insert touch a random
  // btree leaf (one more WAL record per create) for a uniqueness nothing relies on: outbox rows
  // are found by seq, ids are fresh random UUIDs, and events.id stays UNIQUE where ids are
  // looked up and deduplicated (docs/performance.md, W3).
  statements: [`ALTER TABLE ${S}.outbox DROP CONSTRAINT IF EXISTS outbox_event_id_key`],
  cockroachStatements: [`DROP INDEX IF EXISTS ${S}.outbox@outbox_event_id_key CASCADE`],
};
