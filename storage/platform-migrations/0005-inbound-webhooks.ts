import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 5: inbound webhooks: receivers and receipts. Shipped: never edit it, add a new one. */
export const m0005: Migration = {
  version: 5,
  name: 'inbound webhooks: receivers and receipts',
  statements: [
    `CREATE TABLE ${S}.webhook_receivers (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      public_key text NOT NULL UNIQUE,
      secret_id uuid NULL REFERENCES ${S}.secrets (id),
      sealed_secret text NULL,
      signing_secret_ref text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((secret_id IS NULL) <> (sealed_secret IS NULL)))`,
    `CREATE INDEX webhook_receivers_project_idx ON ${S}.webhook_receivers (project_id)`,
    `CREATE TABLE ${S}.webhook_receipts (
      id uuid PRIMARY KEY,
      receiver_id uuid NOT NULL REFERENCES ${S}.webhook_receivers(id) ON DELETE CASCADE,
      project_id uuid NOT NULL,
      external_id text NOT NULL,
      type text NOT NULL,
      event_id uuid NOT NULL,
      payload jsonb NOT NULL,
      correlation_id text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (receiver_id, external_id))`,
    `CREATE INDEX webhook_receipts_project_idx ON ${S}.webhook_receipts (project_id, received_at)`,
  ],
};
