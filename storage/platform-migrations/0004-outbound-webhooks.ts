import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 4: outbound webhooks: secrets, endpoints, deliveries. Shipped: never edit it, add a new one. */
export const m0004: Migration = {
  version: 4,
  name: 'outbound webhooks: secrets, endpoints, deliveries',
  statements: [
    `CREATE TABLE ${S}.platform_keys (name text PRIMARY KEY, value text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.secrets (
      id uuid PRIMARY KEY,
      project_id uuid NULL,
      sealed text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.credential_reveals (
      id uuid PRIMARY KEY,
      secret_id uuid NOT NULL REFERENCES ${S}.secrets (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL)`,
    `CREATE TABLE ${S}.webhook_endpoints (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL,
      url text NOT NULL,
      description text NULL,
      event_type_filter text NULL,
      filter jsonb NULL,
      max_attempts int NOT NULL,
      base_delay_ms int NOT NULL,
      secret_id uuid NOT NULL REFERENCES ${S}.secrets (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX webhook_endpoints_project_idx ON ${S}.webhook_endpoints (project_id)`,
    `CREATE TABLE ${S}.webhook_deliveries (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL,
      endpoint_id uuid NOT NULL REFERENCES ${S}.webhook_endpoints (id) ON DELETE CASCADE,
      event_id uuid NOT NULL,
      event_type text NOT NULL,
      payload jsonb NOT NULL,
      state text NOT NULL,
      attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
      attempt_limit int NOT NULL,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      claimed_until timestamptz NULL,
      claim_token uuid NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (endpoint_id, event_id))`,
    `CREATE INDEX webhook_deliveries_due_idx ON ${S}.webhook_deliveries (state, next_attempt_at)`,
    `CREATE INDEX webhook_deliveries_project_idx ON ${S}.webhook_deliveries (project_id, created_at)`,
    `CREATE TABLE ${S}.webhook_router_cursor (id int PRIMARY KEY, last_seq bigint NOT NULL, gap_since timestamptz NULL)`,
    `INSERT INTO ${S}.webhook_router_cursor (id, last_seq) SELECT 1, COALESCE(max(seq), 0) FROM ${S}.events`,
  ],
};
