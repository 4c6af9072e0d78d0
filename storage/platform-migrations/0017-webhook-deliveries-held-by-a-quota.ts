import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 17: webhook deliveries held by a quota. Shipped: never edit it, add a new one. */
export const m0017: Migration = {
  version: 17,
  name: 'webhook deliveries held by a quota',
  // A delivery a hard webhook.deliveries.monthly quota refused is not attempted: it waits
  // (no attempt recorded) until the window resets or the quota changes, and says why here.
  statements: [`ALTER TABLE ${S}.webhook_deliveries ADD COLUMN held_reason text NULL`],
};
