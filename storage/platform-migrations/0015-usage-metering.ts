import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 15: usage metering: usage events and their rollups. Shipped: never edit it, add a new one. */
export const m0015: Migration = {
  version: 15,
  name: 'usage metering: usage events and their rollups',
  // Written by the buffered usage writer (runtime/usage/usage-writer.ts), read by the usage routes
  // and by quotas. (project_id, kind, at) serves a quota's "sum in the window" and the kind filter;
  // (project_id, at, id) serves the event listing's order and cursor; (at) the retention sweep.
  // usage_rollup_cursor is BillingDrainRollup's high-water mark: events with id <= last_id are in usage_rollups.
  statements: [
    `CREATE TABLE ${S}.usage_events (
      id bigserial PRIMARY KEY,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL,
      kind text NOT NULL,
      quantity bigint NOT NULL,
      at timestamptz NOT NULL,
      operation_id text NOT NULL,
      correlation_id text NOT NULL,
      dimensions jsonb NULL)`,
    `CREATE INDEX usage_events_project_at_idx ON ${S}.usage_events (project_id, at, id)`,
    `CREATE INDEX usage_events_project_kind_at_idx ON ${S}.usage_events (project_id, kind, at)`,
    `CREATE INDEX usage_events_at_idx ON ${S}.usage_events (at)`,
    `CREATE TABLE ${S}.usage_rollup_cursor (id int PRIMARY KEY, last_id bigint NOT NULL)`,
    `INSERT INTO ${S}.usage_rollup_cursor (id, last_id) VALUES (1, 0)`,
    `CREATE TABLE ${S}.usage_rollups (
      project_id uuid NOT NULL,
      kind text NOT NULL,
      time_window text NOT NULL CHECK (time_window IN ('hour', 'day', 'calendar-month')),
      window_start timestamptz NOT NULL,
      dimensions_key text NOT NULL DEFAULT '',
      quantity bigint NOT NULL,
      PRIMARY KEY (project_id, time_window, kind, window_start, dimensions_key))`,
  ],
};
