import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 6: retention: indexes on the swept timestamp columns. Shipped: never edit it, add a new one. */
export const m0006: Migration = {
  version: 6,
  name: 'retention: indexes on the swept timestamp columns',
  // The retention sweepers (runtime/retention) delete the oldest rows in batches ordered by
  // these columns; without an index each batch would scan the whole table. Audit and events
  // are append-only with a rising timestamp, so these btrees only grow at their right edge.
  // idempotency_keys already has idempotency_keys_created_idx.
  statements: [
    `CREATE INDEX audit_at_idx ON ${S}.audit (at)`,
    `CREATE INDEX events_occurred_idx ON ${S}.events (occurred_at)`,
    // Partial: only finished deliveries are ever swept; live ones stay out of this index.
    `CREATE INDEX webhook_deliveries_finished_idx ON ${S}.webhook_deliveries (updated_at) WHERE state IN ('Succeeded', 'DeadLettered')`,
  ],
};
