import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 16: quotas: project quotas and their durable counters. Shipped: never edit it, add a new one. */
export const m0016: Migration = {
  version: 16,
  name: 'quotas: project quotas and their durable counters',
  // Quota rows are written by the Project actor only (one writer per project). quota_usage
  // holds the owner's counters per quota and window bucket (runtime/quota/ledger.ts), persisted
  // in batches off the request path so a restart starts from them; `used` only grows within a
  // bucket (GREATEST on upsert). docs/usage.md "Quotas".
  statements: [
    `CREATE TABLE ${S}.quotas (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL,
      kind text NOT NULL,
      quota_limit bigint NOT NULL CHECK (quota_limit >= 0),
      mode text NOT NULL CHECK (mode IN ('hard', 'soft', 'monitor', 'reservation')),
      time_window text NOT NULL,
      dimensions jsonb NOT NULL DEFAULT '{}'::jsonb,
      state text NOT NULL DEFAULT 'active',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX quotas_project_idx ON ${S}.quotas (project_id, created_at, id)`,
    `CREATE TABLE ${S}.quota_usage (
      quota_id uuid NOT NULL REFERENCES ${S}.quotas (id) ON DELETE CASCADE,
      window_start timestamptz NOT NULL,
      used bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (quota_id, window_start))`,
  ],
};
