import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 3: data plane support: idempotency, outbox, events, audit. Shipped: never edit it, add a new one. */
export const m0003: Migration = {
  version: 3,
  name: 'data plane support: idempotency, outbox, events, audit',
  statements: [
    `CREATE TABLE ${S}.idempotency_keys (
      project_id uuid NOT NULL,
      branch text NOT NULL,
      operation_id text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      status int NOT NULL,
      body jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, branch, operation_id, key))`,
    `CREATE INDEX idempotency_keys_created_idx ON ${S}.idempotency_keys (created_at)`,
    `CREATE TABLE ${S}.outbox (
      seq bigserial PRIMARY KEY,
      event_id uuid NOT NULL UNIQUE,
      type text NOT NULL,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL,
      branch text NOT NULL,
      entity text NULL,
      entity_id text NULL,
      changed_fields jsonb NOT NULL,
      correlation_id text NOT NULL,
      publication_version bigint NOT NULL,
      occurred_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.events (
      seq bigserial PRIMARY KEY,
      id uuid NOT NULL UNIQUE,
      type text NOT NULL,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL,
      entity text NULL,
      correlation_id text NOT NULL,
      publication_version bigint NOT NULL,
      occurred_at timestamptz NOT NULL,
      data jsonb NOT NULL)`,
    `CREATE INDEX events_project_idx ON ${S}.events (project_id, seq)`,
    `CREATE INDEX events_correlation_idx ON ${S}.events (correlation_id)`,
    `CREATE TABLE ${S}.audit (
      seq bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT now(),
      correlation_id text NOT NULL,
      tenant_id uuid NULL,
      project_id uuid NULL,
      actor text NOT NULL,
      operation_id text NOT NULL,
      decision text NOT NULL,
      reason_code text NOT NULL,
      status int NOT NULL,
      details jsonb NOT NULL DEFAULT '{}'::jsonb)`,
    `CREATE INDEX audit_project_idx ON ${S}.audit (project_id, seq)`,
    `CREATE INDEX audit_correlation_idx ON ${S}.audit (correlation_id)`,
  ],
};
